-- A directive recorded without params had them negotiated from the PM's
-- words by the big model; negotiated_by names that model
-- ("provider:model"), '' when the caller gave the params.
ALTER TABLE directives ADD COLUMN negotiated_by text NOT NULL DEFAULT '';
