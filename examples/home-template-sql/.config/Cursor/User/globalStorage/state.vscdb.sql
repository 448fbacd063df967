-- Sample Cursor global store: one current-era composer (headers + bubble rows) in the
-- shop project, plus a cursorAuth row agentdex must never read.
CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB);
CREATE TABLE cursorDiskKV (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB);
INSERT INTO ItemTable VALUES ('cursorAuth/accessToken', 'sample-not-a-real-token');
INSERT INTO cursorDiskKV VALUES ('composerData:7d1f2c3a-0b4e-4c5d-9e6f-a1b2c3d4e5f6',
'{"composerId":"7d1f2c3a-0b4e-4c5d-9e6f-a1b2c3d4e5f6","name":"Cart total rounding","createdAt":1794492000000,"lastUpdatedAt":1794492090000,"modelConfig":{"modelName":"claude-4.5-sonnet"},"fullConversationHeadersOnly":[{"bubbleId":"b-0001","type":1},{"bubbleId":"b-0002","type":2},{"bubbleId":"b-0003","type":2}]}');
INSERT INTO cursorDiskKV VALUES ('bubbleId:7d1f2c3a-0b4e-4c5d-9e6f-a1b2c3d4e5f6:b-0001',
'{"type":1,"text":"the cart total shows 19.999 instead of 20.00, round it to cents","createdAt":"2026-11-12T14:00:00.000Z"}');
INSERT INTO cursorDiskKV VALUES ('bubbleId:7d1f2c3a-0b4e-4c5d-9e6f-a1b2c3d4e5f6:b-0002',
'{"type":2,"text":"","createdAt":"2026-11-12T14:00:20.000Z","toolFormerData":{"toolCallId":"tc-1","name":"read_file","status":"completed","rawArgs":"{\"target_file\":\"shop/cart.py\"}","result":"def total(items): return sum(i.price for i in items)"}}');
INSERT INTO cursorDiskKV VALUES ('bubbleId:7d1f2c3a-0b4e-4c5d-9e6f-a1b2c3d4e5f6:b-0003',
'{"type":2,"text":"total() now returns Decimal quantized to 0.01 with ROUND_HALF_UP.","createdAt":"2026-11-12T14:01:30.000Z"}');
