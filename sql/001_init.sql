-- Mnemo schema. Every tenant-owned row carries org_id; every query filters on it.

CREATE TABLE settings (
  key text PRIMARY KEY,
  value text NOT NULL
);
INSERT INTO settings (key, value) VALUES ('embedding_dim', '{{EMBEDDING_DIM}}');

CREATE TABLE organisations (
  id text PRIMARY KEY,
  name text NOT NULL,
  tier text NOT NULL DEFAULT 'default',
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE api_keys (
  id text PRIMARY KEY,
  org_id text NOT NULL REFERENCES organisations (id) ON DELETE CASCADE,
  user_id text,
  name text,
  kind text NOT NULL DEFAULT 'api' CHECK (kind IN ('api', 'service')),
  key_hash text NOT NULL UNIQUE,
  prefix text NOT NULL,
  last_four text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz,
  revoked_at timestamptz
);
CREATE INDEX api_keys_org_idx ON api_keys (org_id, created_at);

CREATE TABLE groups (
  id text PRIMARY KEY,
  org_id text NOT NULL REFERENCES organisations (id) ON DELETE CASCADE,
  name text NOT NULL,
  prompt text,
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'archived')),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX groups_org_idx ON groups (org_id, status, created_at);

CREATE TABLE memories (
  id uuid PRIMARY KEY,
  org_id text NOT NULL REFERENCES organisations (id) ON DELETE CASCADE,
  type text NOT NULL CHECK (type IN ('fact', 'artifact', 'episode', 'lesson', 'procedure')),
  text text NOT NULL,
  user_id text,
  agent_id text,
  conv_id text,
  app_id text,
  group_ids text[] NOT NULL DEFAULT '{}',
  categories text[] NOT NULL DEFAULT '{}',
  -- type-specific fields (FactDetails, ArtifactDetails, EpisodeDetails, DirectiveDetails) other
  -- than those kept in columns below
  details jsonb NOT NULL DEFAULT '{}',
  -- fact status: active | superseded (null for other types)
  status text CHECK (status IN ('active', 'superseded')),
  -- no foreign key: a hard-deleted fact leaves the chain, and the walker stops there
  supersedes uuid,
  namespace text,
  trigger_entities text[] NOT NULL DEFAULT '{}',
  outcome text CHECK (outcome IN ('resolved', 'failed')),
  -- artifacts: the full body, returned only on get or when asked for
  full_content text,
  -- normalised-text hash for dedup of facts and artifact version chains
  content_hash text,
  -- idempotent writes: a retried job writes the same keys and conflicts instead of duplicating
  job_id text,
  write_key text,
  embedding vector({{EMBEDDING_DIM}}),
  tsv tsvector GENERATED ALWAYS AS (to_tsvector('english', coalesce(text, ''))) STORED,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX memories_org_created_idx ON memories (org_id, created_at, id);
CREATE INDEX memories_org_user_idx ON memories (org_id, user_id, created_at, id);
CREATE INDEX memories_org_agent_idx ON memories (org_id, agent_id, created_at, id);
CREATE INDEX memories_org_conv_idx ON memories (org_id, conv_id, created_at, id);
CREATE INDEX memories_org_app_idx ON memories (org_id, app_id, created_at, id);
CREATE INDEX memories_group_ids_idx ON memories USING gin (group_ids);
CREATE INDEX memories_trigger_entities_idx ON memories USING gin (trigger_entities);
CREATE INDEX memories_tsv_idx ON memories USING gin (tsv);
CREATE INDEX memories_embedding_idx ON memories USING hnsw (embedding vector_cosine_ops);
CREATE INDEX memories_supersedes_idx ON memories (supersedes) WHERE supersedes IS NOT NULL;
CREATE INDEX memories_hash_idx ON memories (org_id, user_id, content_hash) WHERE content_hash IS NOT NULL;
CREATE UNIQUE INDEX memories_write_key_idx ON memories (job_id, write_key) WHERE job_id IS NOT NULL;

CREATE TABLE ingest_jobs (
  id text PRIMARY KEY,
  org_id text NOT NULL REFERENCES organisations (id) ON DELETE CASCADE,
  api_key_id text,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'running', 'succeeded', 'failed')),
  request jsonb NOT NULL,
  result jsonb,
  error jsonb,
  attempts integer NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  started_at timestamptz,
  finished_at timestamptz
);
CREATE INDEX ingest_jobs_org_idx ON ingest_jobs (org_id, created_at);
CREATE INDEX ingest_jobs_finished_idx ON ingest_jobs (finished_at) WHERE finished_at IS NOT NULL;

CREATE TABLE webhooks (
  org_id text PRIMARY KEY REFERENCES organisations (id) ON DELETE CASCADE,
  url text NOT NULL,
  events text[] NOT NULL,
  enabled boolean NOT NULL DEFAULT true,
  -- AES-256-GCM ciphertext of the signing secret under the server key (never plain text)
  secret_enc text NOT NULL,
  secret_last_four text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE webhook_deliveries (
  id uuid PRIMARY KEY,
  org_id text NOT NULL REFERENCES organisations (id) ON DELETE CASCADE,
  event_id text NOT NULL,
  event text NOT NULL,
  job_id text,
  url text NOT NULL,
  attempt integer NOT NULL,
  status_code integer,
  error text,
  duration_ms integer,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_deliveries_org_idx ON webhook_deliveries (org_id, created_at DESC, id DESC);
