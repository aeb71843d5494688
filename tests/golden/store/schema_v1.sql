-- A qwenchat database of schema version 1, as that version wrote it (the schema of app/store/schema.cpp's
-- steps 1..1, frozen here: a later edit of a released step shows up as a difference). Loaded by
-- tests/unit/test_store_fixtures.cpp, which opens it with today's store and checks every row survived.
-- Add a file like this one for every new schema version.
PRAGMA foreign_keys = ON;
CREATE TABLE conversations (
  id INTEGER PRIMARY KEY,
  title TEXT NOT NULL DEFAULT '',
  system_prompt TEXT NOT NULL DEFAULT '',
  model_path TEXT NOT NULL DEFAULT '',
  settings TEXT NOT NULL DEFAULT '{}',
  created_ms INTEGER NOT NULL,
  updated_ms INTEGER NOT NULL
);
CREATE TABLE messages (
  conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
  id INTEGER NOT NULL,
  parent_id INTEGER,
  role TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant')),
  content TEXT NOT NULL DEFAULT '',
  thinking TEXT NOT NULL DEFAULT '',
  created_ms INTEGER NOT NULL,
  updated_ms INTEGER NOT NULL,
  model TEXT NOT NULL DEFAULT '',
  settings TEXT NOT NULL DEFAULT '{}',
  stats TEXT NOT NULL DEFAULT '{}',
  state TEXT NOT NULL DEFAULT 'complete' CHECK (state IN ('complete', 'streaming', 'stopped', 'error')),
  PRIMARY KEY (conversation_id, id),
  FOREIGN KEY (conversation_id, parent_id) REFERENCES messages(conversation_id, id) ON DELETE CASCADE
);
-- The child key of the parent link: without it every cascade step scans the whole table.
CREATE INDEX messages_by_parent ON messages(conversation_id, parent_id);
INSERT INTO conversations (id, title, system_prompt, model_path, settings, created_ms, updated_ms)
  VALUES (5, 'old chat', 'You are terse.', '/models/old.gguf', '{"seed":9,"temperature":0.7}', 1764000000000, 1764000500000);
INSERT INTO conversations (id, title, system_prompt, model_path, settings, created_ms, updated_ms)
  VALUES (6, 'ünïcödé ✓ and ''quotes''', '', '', '{}', 1764000600000, 1764000700000);
INSERT INTO messages (conversation_id, id, parent_id, role, content, thinking, created_ms, updated_ms, model, settings, stats, state) VALUES
  (5, 1, NULL, 'user', 'What is 17 + 25?', '', 1764000100000, 1764000100000, '', '{}', '{}', 'complete'),
  (5, 2, 1, 'assistant', '17 + 25 = 42.', 'add the tens', 1764000110000, 1764000120000, '/models/old.gguf', '{"seed":9}', '{"tok_per_s":33.5,"generated_tokens":12}', 'complete'),
  (5, 3, 1, 'assistant', '17 + 25 is', '', 1764000200000, 1764000210000, '/models/old.gguf', '{}', '{}', 'stopped'),
  (5, 4, 2, 'user', 'And 8 * 7?', '', 1764000300000, 1764000300000, '', '{}', '{}', 'complete'),
  (5, 5, 4, 'assistant', '8 * 7 = 56.', '', 1764000310000, 1764000320000, '/models/old.gguf', '{}', '{}', 'complete'),
  (6, 1, NULL, 'user', 'Zeilen
über zwei Zeilen 日本語', '', 1764000600000, 1764000600000, '', '{}', '{}', 'complete'),
  (6, 2, 1, 'assistant', '', '', 1764000610000, 1764000610000, '', '{}', '{}', 'error');
PRAGMA application_id = 1363363924;
PRAGMA user_version = 1;
