// Table types for the query layer. Times are epoch milliseconds (integers) in every engine, so
// lease arithmetic is plain comparison and no driver's date handling gets in the way.
import type { Generated } from 'kysely';
import type { WebTables } from './web-schema.ts';

export interface AccountsTable {
  id: string;
  email: string;
  plan: 'free' | 'paid';
  /** Set once the account buys credits; a paid plan grants access on its own. */
  has_purchase: number;
  credits_available: number;
  credits_reserved: number;
  /** Queued and processing tasks; moves with credits_reserved. */
  active_tasks: Generated<number>;
  created_at: number;
}

export interface ApiKeysTable {
  id: string;
  account_id: string;
  name: string;
  prefix: string;
  key_hash: string;
  created_at: number;
  last_used_at: number | null;
  deleted_at: number | null;
}

export type TaskStatus = 'queued' | 'processing' | 'succeeded' | 'failed' | 'canceled';

export interface TasksTable {
  id: string;
  account_id: string;
  status: TaskStatus;
  image_url: string;
  subject: string;
  precision: string;
  output_format: string;
  credits: number;
  attempts: number;
  /** Claims so far, released ones too; the latest claim's number names its result file. */
  claims: Generated<number>;
  lease_token: string | null;
  lease_expires_at: number | null;
  result_key: string | null;
  result_width: number | null;
  result_height: number | null;
  /** When retention deleted the files the task's attempts wrote (of a failed task too). */
  result_deleted_at: number | null;
  error_code: string | null;
  error_message: string | null;
  created_at: number;
  updated_at: number;
  finished_at: number | null;
}

export type LedgerKind = 'grant' | 'purchase' | 'reserve' | 'charge' | 'refund';

export interface CreditLedgerTable {
  id: Generated<number>;
  account_id: string;
  task_id: string | null;
  kind: LedgerKind;
  /** Change to the spendable balance. */
  available_delta: number;
  /** Change to credits held for queued/processing tasks. */
  reserved_delta: number;
  created_at: number;
}

export interface IdempotencyKeysTable {
  account_id: string;
  key: string;
  fingerprint: string;
  task_id: string;
  created_at: number;
}

export interface Database extends WebTables {
  accounts: AccountsTable;
  api_keys: ApiKeysTable;
  tasks: TasksTable;
  credit_ledger: CreditLedgerTable;
  idempotency_keys: IdempotencyKeysTable;
}
