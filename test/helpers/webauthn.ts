import crypto from 'node:crypto';

/**
 * A software WebAuthn authenticator for tests: real P-256 keys, CBOR attestation "none", real ECDSA
 * assertions over authenticatorData ‖ SHA-256(clientDataJSON). Options may override the origin or RP id
 * a ceremony claims, and an assertion's signature can be tampered with.
 */

// Minimal CBOR encoder: unsigned/negative ints, byte strings, text strings, arrays and maps.
function head(major: number, n: number): Buffer {
  if (n < 24) return Buffer.from([(major << 5) | n]);
  if (n < 256) return Buffer.from([(major << 5) | 24, n]);
  if (n < 65536) return Buffer.from([(major << 5) | 25, n >> 8, n & 255]);
  const b = Buffer.alloc(5);
  b[0] = (major << 5) | 26;
  b.writeUInt32BE(n, 1);
  return b;
}

export function cbor(v: unknown): Buffer {
  if (typeof v === 'number') return v >= 0 ? head(0, v) : head(1, -1 - v);
  if (Buffer.isBuffer(v) || v instanceof Uint8Array) return Buffer.concat([head(2, v.length), Buffer.from(v)]);
  if (typeof v === 'string') return Buffer.concat([head(3, Buffer.byteLength(v)), Buffer.from(v)]);
  if (Array.isArray(v)) return Buffer.concat([head(4, v.length), ...v.map(cbor)]);
  if (v instanceof Map) return Buffer.concat([head(5, v.size), ...[...v].flatMap(([k, x]) => [cbor(k), cbor(x)])]);
  if (v && typeof v === 'object') return cbor(new Map(Object.entries(v)));
  throw new Error(`cbor: unsupported ${typeof v}`);
}

const b64u = (b: Buffer | Uint8Array) => Buffer.from(b).toString('base64url');
const FLAG_UP = 0x01;
const FLAG_UV = 0x04;
const FLAG_AT = 0x40;

interface StoredCredential {
  id: Buffer;
  rpId: string;
  userHandle: string;
  key: crypto.KeyObject;
  counter: number;
}

export interface CeremonyOverrides {
  origin?: string;
  rpId?: string;
  /** Skip user verification (UV flag clear). */
  noUserVerification?: boolean;
  /** Flip one bit of the signature. */
  tamperSignature?: boolean;
  /** Use this challenge instead of the one in the options. */
  challenge?: string;
}

export class SoftAuthenticator {
  readonly credentials: StoredCredential[] = [];

  constructor(readonly origin: string) {}

  private clientData(type: string, challenge: string, origin: string) {
    return Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin: false }));
  }

  /** navigator.credentials.create(): a resident P-256 credential with attestation "none". */
  create(options: any, o: CeremonyOverrides = {}) {
    const rpId = o.rpId ?? options.rp.id;
    const { privateKey, publicKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwk = publicKey.export({ format: 'jwk' });
    const cose = new Map<number, unknown>([
      [1, 2],
      [3, -7],
      [-1, 1],
      [-2, Buffer.from(jwk.x!, 'base64url')],
      [-3, Buffer.from(jwk.y!, 'base64url')],
    ]);
    const id = crypto.randomBytes(32);
    const idLen = Buffer.alloc(2);
    idLen.writeUInt16BE(id.length);
    const flags = FLAG_UP | FLAG_AT | (o.noUserVerification ? 0 : FLAG_UV);
    const authData = Buffer.concat([
      crypto.createHash('sha256').update(rpId).digest(),
      Buffer.from([flags]),
      Buffer.alloc(4),
      Buffer.alloc(16),
      idLen,
      id,
      cbor(cose),
    ]);
    const attestationObject = cbor(new Map<string, unknown>([['fmt', 'none'], ['attStmt', new Map()], ['authData', authData]]));
    this.credentials.push({ id, rpId, userHandle: options.user.id, key: privateKey, counter: 0 });
    const clientDataJSON = this.clientData('webauthn.create', o.challenge ?? options.challenge, o.origin ?? this.origin);
    return {
      id: b64u(id),
      rawId: b64u(id),
      type: 'public-key',
      response: { clientDataJSON: b64u(clientDataJSON), attestationObject: b64u(attestationObject), transports: ['internal'] },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    };
  }

  /** navigator.credentials.get(): an assertion with the first allowed (or, if none listed, any) credential. */
  get(options: any, o: CeremonyOverrides & { credential?: StoredCredential } = {}) {
    const allowed: string[] = (options.allowCredentials ?? []).map((c: any) => c.id);
    const cred =
      o.credential ?? this.credentials.find((c) => c.rpId === options.rpId && (allowed.length === 0 || allowed.includes(b64u(c.id))));
    if (!cred) throw new Error('no matching credential');
    cred.counter += 1;
    const counter = Buffer.alloc(4);
    counter.writeUInt32BE(cred.counter);
    const flags = FLAG_UP | (o.noUserVerification ? 0 : FLAG_UV);
    const authData = Buffer.concat([crypto.createHash('sha256').update(o.rpId ?? cred.rpId).digest(), Buffer.from([flags]), counter]);
    const clientDataJSON = this.clientData('webauthn.get', o.challenge ?? options.challenge, o.origin ?? this.origin);
    const signature = crypto.sign('sha256', Buffer.concat([authData, crypto.createHash('sha256').update(clientDataJSON).digest()]), cred.key);
    if (o.tamperSignature) signature[signature.length - 1] ^= 1;
    return {
      id: b64u(cred.id),
      rawId: b64u(cred.id),
      type: 'public-key',
      response: {
        clientDataJSON: b64u(clientDataJSON),
        authenticatorData: b64u(authData),
        signature: b64u(signature),
        userHandle: cred.userHandle,
      },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    };
  }
}
