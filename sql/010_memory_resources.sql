-- Artifact version chains: every version carries details.root_id (v1's id), so revisions look the
-- chain up by it instead of scanning the organisation's artifacts.
CREATE INDEX memories_artifact_root_idx ON memories (org_id, (details->>'root_id'))
  WHERE type = 'artifact';
