-- Sample Cursor workspace store for ~/src/shop: maps the composer to this workspace and
-- keeps a legacy aiService.prompts entry.
CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB);
CREATE TABLE cursorDiskKV (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB);
INSERT INTO ItemTable VALUES ('composer.composerData',
'{"allComposers":[{"composerId":"7d1f2c3a-0b4e-4c5d-9e6f-a1b2c3d4e5f6","name":"Cart total rounding"}]}');
INSERT INTO ItemTable VALUES ('aiService.prompts',
'[{"text":"explain the checkout flow in shop/checkout.py","commandType":4}]');
