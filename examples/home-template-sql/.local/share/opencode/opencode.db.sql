-- Sample OpenCode >= 1.2 store (1.x schema). __HOME__ is the rendered home's path.
CREATE TABLE session(id TEXT PRIMARY KEY, project_id TEXT, parent_id TEXT, directory TEXT, title TEXT, version TEXT, time_created INTEGER, time_updated INTEGER);
CREATE TABLE message(id TEXT PRIMARY KEY, session_id TEXT, time_created INTEGER, time_updated INTEGER, data TEXT);
CREATE TABLE part(id TEXT PRIMARY KEY, message_id TEXT, session_id TEXT, time_created INTEGER, time_updated INTEGER, data TEXT);
CREATE TABLE account(id TEXT PRIMARY KEY, email TEXT, access_token TEXT);
INSERT INTO account VALUES ('acc_1', 'dev@example.invalid', 'sample-not-a-real-token');
INSERT INTO session VALUES ('ses_shop_auth', 'prj_shop', NULL, '__HOME__/src/shop-wt-feat-auth', 'Session expiry for login', '1.2.4', 1794673800000, 1794673900000);
INSERT INTO message VALUES ('msg_1', 'ses_shop_auth', 1794673800000, 1794673800000, '{"role":"user","time":{"created":1794673800000}}');
INSERT INTO message VALUES ('msg_2', 'ses_shop_auth', 1794673812000, 1794673830000, '{"role":"assistant","modelID":"gpt-5","providerID":"openai","time":{"created":1794673812000}}');
INSERT INTO part VALUES ('prt_1', 'msg_1', 'ses_shop_auth', 1794673800000, 1794673800000, '{"type":"text","text":"make login sessions expire after 30 minutes idle"}');
INSERT INTO part VALUES ('prt_2', 'msg_2', 'ses_shop_auth', 1794673815000, 1794673815000, '{"type":"tool","tool":"grep","callID":"call_1","state":{"status":"completed","input":{"pattern":"SESSION_TTL"},"output":"shop/auth/session.py:12: SESSION_TTL = None"}}');
INSERT INTO part VALUES ('prt_3', 'msg_2', 'ses_shop_auth', 1794673830000, 1794673830000, '{"type":"text","text":"SESSION_TTL is now 30 minutes and every authenticated request refreshes it."}');
