-- Sample Claude Code 0.2.9x SQLite store (drizzle schema). __HOME__ is the rendered home.
CREATE TABLE base_messages (uuid TEXT PRIMARY KEY, parent_uuid TEXT, session_id TEXT NOT NULL, timestamp INTEGER NOT NULL, message_type TEXT NOT NULL, cwd TEXT NOT NULL, user_type TEXT NOT NULL, version TEXT NOT NULL, isSidechain INTEGER NOT NULL);
CREATE TABLE user_messages (uuid TEXT PRIMARY KEY, message TEXT NOT NULL, tool_use_result TEXT, timestamp INTEGER NOT NULL);
CREATE TABLE assistant_messages (uuid TEXT PRIMARY KEY, cost_usd REAL NOT NULL, duration_ms INTEGER NOT NULL, message TEXT NOT NULL, is_api_error_message INTEGER DEFAULT 0 NOT NULL, timestamp INTEGER NOT NULL, model TEXT DEFAULT '' NOT NULL);
CREATE TABLE conversation_summaries (leaf_uuid TEXT PRIMARY KEY, summary TEXT NOT NULL, updated_at INTEGER NOT NULL);
INSERT INTO base_messages VALUES ('5e0c0000-0000-4000-8000-000000000001', NULL, 'c0ffee00-0000-4000-8000-00000000d001', 1794301200, 'user', '__HOME__/src/shop', 'external', '0.2.93', 0);
INSERT INTO base_messages VALUES ('5e0c0000-0000-4000-8000-000000000002', '5e0c0000-0000-4000-8000-000000000001', 'c0ffee00-0000-4000-8000-00000000d001', 1794301215, 'assistant', '__HOME__/src/shop', 'external', '0.2.93', 0);
INSERT INTO user_messages VALUES ('5e0c0000-0000-4000-8000-000000000001', '{"role":"user","content":"what does shop/inventory.py reserve() lock?"}', NULL, 1794301200);
INSERT INTO assistant_messages VALUES ('5e0c0000-0000-4000-8000-000000000002', 0.012, 4100, '{"role":"assistant","content":[{"type":"text","text":"reserve() takes no lock; it reads stock and writes it back in two statements."}]}', 0, 1794301215, 'claude-3-7-sonnet-20250219');
INSERT INTO conversation_summaries VALUES ('5e0c0000-0000-4000-8000-000000000002', 'Inventory reserve locking', 1794301215);
