-- Where an organisation came from (issue 13). Organisations the identity provider names and those
-- the operator creates share one id space, and the bootstrap organisation's id is fixed
-- (org_default), so a token must not enter an organisation just by naming its id. A token may
-- enter only an organisation created from a token (origin 'identity_provider') or one the
-- operator linked explicitly (`mnemo admin link-org`, which sets idp_linked_at).
ALTER TABLE organisations
  ADD COLUMN origin text NOT NULL DEFAULT 'operator' CHECK (origin IN ('operator', 'identity_provider')),
  ADD COLUMN idp_linked_at timestamptz;

-- Existing organisations: those created from tokens were named after their id and never got an
-- operator key (`admin create-org` always makes one; the bootstrap organisation is org_default).
-- Anything else stays 'operator'; an operator can link it if tokens should reach it.
UPDATE organisations o SET origin = 'identity_provider'
WHERE o.id <> 'org_default'
  AND o.name = o.id
  AND NOT EXISTS (SELECT 1 FROM api_keys k WHERE k.org_id = o.id AND k.kind = 'api');
