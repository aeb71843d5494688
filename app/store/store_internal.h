// Helpers shared by the store's .cpp files (not part of the API).
#pragma once

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Exception.h>
#include <SQLiteCpp/Statement.h>
#include <sqlite3.h>

#include <exception>
#include <string>

#include "chat/chat_state.h"
#include "qwenchat/result.h"

namespace qc::store::detail {

// True for the errors that mean "another connection holds the lock": SQLITE_BUSY (another process) and
// SQLITE_LOCKED (another connection of this process). The same write can succeed later.
inline bool is_busy_code(int code) {
  return (code & 0xff) == SQLITE_BUSY || (code & 0xff) == SQLITE_LOCKED;
}

// Runs f (which returns a Result or a Status) and turns any exception SQLiteCpp (or the allocator) throws
// into an Error naming the operation and the database: "store: <what> in <path>: <sqlite message>".
// `busy` (when given) is set to whether the failure was a lock held by another connection.
template <class F>
auto guarded(const std::string& path, const std::string& what, F&& f, bool* busy = nullptr) -> decltype(f()) {
  if (busy != nullptr) *busy = false;
  try {
    return f();
  } catch (const SQLite::Exception& e) {
    const bool locked = is_busy_code(e.getErrorCode());
    if (busy != nullptr) *busy = locked;
    return make_error("store: " + what + " in " + path + ": " + e.what(),
                      locked ? "another process holds the database" : "");
  } catch (const std::exception& e) {
    return make_error("store: " + what + " in " + path + ": " + e.what());
  }
}

// JSON column text; invalid UTF-8 in model output is replaced rather than thrown on.
std::string json_text(const nlohmann::json& j);
// Parses a JSON column; `what` names it for the error ("message 7 stats").
Result<nlohmann::json> parse_json_column(const std::string& text, const std::string& what);

// INSERT (the row's id is then the database's, returned) or UPDATE (by c.id; throws when no such row) of
// every column of one conversation row.
chat::ConversationId write_conversation(SQLite::Database& db, const chat::Conversation& c, bool insert);

// INSERT OR UPDATE of every column of one message row.
void write_message(SQLite::Database& db, chat::ConversationId conversation, const chat::Message& m,
                   bool insert);

}  // namespace qc::store::detail
