// What the server tells the account console about itself, in the page (#console-settings).
import { pageSettings } from '../shared/ui';

export interface ConsoleSettings {
  oauth: Array<{ slug: string; name: string }>;
  passkey: boolean;
  password_encryption: boolean;
  email_verification: boolean;
  /** Telegram login: the bot's public id and name (the token stays on the server). */
  telegram: { bot_id: string; bot_name: string } | null;
  wechat: boolean;
}
export const settings = pageSettings<ConsoleSettings>();
