-- Which queued deliveries a config change drops: each delivery job carries the token its webhook
-- had when the event was queued. Disabling the webhook or unsubscribing an event draws a new token,
-- and a webhook deleted and created again has a new one, so an attempt queued before runs into a
-- token that differs and is dropped, even once the webhook is enabled again or re-created (it was
-- delivered then, to the new URL and signed with the new secret). A URL change or a secret
-- rotation keeps the token: queued attempts follow them (src/webhooks/deliver.ts).
ALTER TABLE webhooks ADD COLUMN drop_token uuid NOT NULL DEFAULT gen_random_uuid();
