// Helpers for the store tests: a raw SQLite connection to inspect what the store wrote.
#pragma once

#include <SQLiteCpp/Database.h>

#include <string>

#include <gtest/gtest.h>

#include "store/store.h"

namespace qc::test {

inline int64_t sql_int(const std::string& path, const std::string& sql) {
  SQLite::Database db(path, SQLite::OPEN_READONLY);
  return db.execAndGet(sql).getInt64();
}

inline std::string sql_text(const std::string& path, const std::string& sql) {
  SQLite::Database db(path, SQLite::OPEN_READONLY);
  return db.execAndGet(sql).getString();
}

template <class T>
T must(Result<T> r) {
  EXPECT_TRUE(r.ok()) << r.error().describe();
  return std::move(r).value();
}

inline void must_ok(const Status& s) {
  EXPECT_TRUE(s.ok()) << s.error().describe();
}

// Creates the conversation in the store and writes the tree's messages (a chat tree built in memory).
inline chat::ChatTree store_tree(store::Store& st, chat::ChatTree tree) {
  const chat::ConversationId id = must(st.insert_tree(tree));
  tree.conversation.id = id;
  return tree;
}

}  // namespace qc::test
