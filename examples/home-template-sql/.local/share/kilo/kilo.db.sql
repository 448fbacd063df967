-- Sample Kilo Code store (kilo.db: OpenCode's 1.x schema, as Kilo's CLI writes it). __HOME__ is the rendered home's path.
CREATE TABLE session(id TEXT PRIMARY KEY, project_id TEXT, parent_id TEXT, directory TEXT, title TEXT, version TEXT, time_created INTEGER, time_updated INTEGER);
CREATE TABLE message(id TEXT PRIMARY KEY, session_id TEXT, time_created INTEGER, time_updated INTEGER, data TEXT);
CREATE TABLE part(id TEXT PRIMARY KEY, message_id TEXT, session_id TEXT, time_created INTEGER, time_updated INTEGER, data TEXT);
CREATE TABLE control_account(id TEXT PRIMARY KEY, email TEXT, access_token TEXT);
INSERT INTO control_account VALUES ('acc_k', 'dev@example.invalid', 'sample-not-a-real-token');
INSERT INTO session VALUES ('ses_kilo_notes', 'prj_notes', NULL, '__HOME__/src/notes-api', 'Paginate the notes list', '7.4.9', 1795336800000, 1795336840000);
INSERT INTO message VALUES ('msg_k1', 'ses_kilo_notes', 1795336800000, 1795336800000, '{"role":"user","time":{"created":1795336800000}}');
INSERT INTO message VALUES ('msg_k2', 'ses_kilo_notes', 1795336809000, 1795336840000, '{"role":"assistant","modelID":"kilo-auto","providerID":"kilo","time":{"created":1795336809000}}');
INSERT INTO part VALUES ('prt_k1', 'msg_k1', 'ses_kilo_notes', 1795336800000, 1795336800000, '{"type":"text","text":"paginate GET /notes with a cursor instead of offset"}');
INSERT INTO part VALUES ('prt_k2', 'msg_k2', 'ses_kilo_notes', 1795336812000, 1795336812000, '{"type":"tool","tool":"read","callID":"call_k1","state":{"status":"completed","input":{"filePath":"notes_api/routes.py"},"output":"@app.get(\"/notes\")\ndef list_notes(offset: int = 0): ..."}}');
INSERT INTO part VALUES ('prt_k3', 'msg_k2', 'ses_kilo_notes', 1795336840000, 1795336840000, '{"type":"text","text":"GET /notes now takes an opaque cursor (the last note id) and returns next_cursor."}');
