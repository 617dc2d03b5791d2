#pragma once

// Raw SQL for tests that look at the database file through connections of their own.

#include <sqlite3.h>

#include <string>

namespace allot::store::testing {

// The first column of the first row of `sql` as text ("" for none or NULL); a statement that
// does not prepare fails the test.
std::string QueryText(sqlite3* db, const std::string& sql);

}  // namespace allot::store::testing
