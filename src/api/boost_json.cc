// Boost.JSON's compiled part (its error category, the parser's stack, memory resources), built
// here as Boost documents for header-only use: Debian's libboost1.81-dev ships the headers, and
// wire_json.cc uses the parser with a handler of its own.
#include <boost/json/src.hpp>  // IWYU pragma: keep
