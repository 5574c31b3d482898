-- Web console sessions (issue 15). The browser holds only a sealed cookie naming the session; the
-- row ties it to the API key it was signed in with, so revoking the key ends every session of that
-- key on its next request (the session lookup joins the key and checks `revoked_at`). The token
-- is stored as its SHA-256, so a copy of the table opens no session.
CREATE TABLE console_sessions (
  token_hash text PRIMARY KEY,
  org_id text NOT NULL REFERENCES organisations (id) ON DELETE CASCADE,
  key_id text NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
  -- the form token of this session (CSRF), sent in every state-changing form
  csrf text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL
);
CREATE INDEX console_sessions_key_idx ON console_sessions (key_id);
CREATE INDEX console_sessions_expiry_idx ON console_sessions (expires_at);
