/** Table types of the gateway database (its own database; nothing else reads or writes it). */
export interface GatewayMetaTable {
  key: string;
  value: string;
}

export interface GatewayDB {
  gateway_meta: GatewayMetaTable;
}
