// The database schema as a list of migration steps. Step k takes a database from user_version k-1 to k;
// a new database runs them all. Steps are append-only history: never edit a released step, add one.
// Internal to the store (and its tests): it speaks SQLiteCpp.
#pragma once

#include "qwenchat/result.h"

namespace SQLite {
class Database;
}

namespace qc::store::schema {

inline constexpr int kCurrentVersion = 2;
// PRAGMA application_id, "QCHT": marks the file as ours so open() refuses someone else's database.
inline constexpr int kApplicationId = 0x51434854;

// PRAGMA user_version of db (0 for a new, empty database).
Result<int> version(SQLite::Database& db);

// Runs the steps from db's version up to `target`, each in its own transaction together with its
// user_version bump, so a failure leaves the database at the last completed version. Errors: the
// database is newer than `target` (written by a newer qwenchat), or it holds tables but no qwenchat
// version / application id (not our file), or a step failed (the message names the step).
Status migrate(SQLite::Database& db, int target = kCurrentVersion);

}  // namespace qc::store::schema
