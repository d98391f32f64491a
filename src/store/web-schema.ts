// Table types of the web app (migrations 002-web, 007-sign-up-attempts and 008-pending-uploads). Times are epoch milliseconds, as elsewhere.

export interface WebCredentialsTable {
  account_id: string;
  password_hash: string;
  created_at: number;
  updated_at: number;
}

export interface WebSessionsTable {
  id: string;
  account_id: string;
  created_at: number;
  expires_at: number;
}

export interface SignInAttemptsTable {
  id: string;
  email: string;
  ip: string;
  succeeded: number;
  created_at: number;
}

export interface SignUpAttemptsTable {
  id: string;
  ip: string;
  created_at: number;
}

export interface WebTaskSourcesTable {
  task_id: string;
  upload_key: string | null;
  max_pixels: number | null;
  created_at: number;
}

/** An upload whose task is not (yet) committed; see migration 008-pending-uploads. */
export interface PendingUploadsTable {
  upload_key: string;
  created_at: number;
  /** When it was taken for deletion; null while a task may still adopt it. */
  claimed_at: number | null;
}

export interface WebTables {
  web_credentials: WebCredentialsTable;
  web_sessions: WebSessionsTable;
  sign_in_attempts: SignInAttemptsTable;
  sign_up_attempts: SignUpAttemptsTable;
  web_task_sources: WebTaskSourcesTable;
  pending_uploads: PendingUploadsTable;
}
