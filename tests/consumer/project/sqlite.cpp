// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// The SQLite component as a user links it (digital_delivery::sqlite_compiled,
// digital_delivery_sqlite_compiled.pc): a state file opened, migrated, read.
#include <digital_delivery/sqlite_state.hpp>

#include <cstdio>
#include <string>
#include <string_view>

#include <unistd.h>

int main()
{
    const std::string path = "/tmp/dd-consumer-sqlite-" + std::to_string(::getpid()) + ".db";
    int rc = 0;
    {
        digital_delivery::sqlite_state db(path);
        static constexpr std::string_view migrations[] = {"CREATE TABLE t(x INTEGER)"};
        db.migrate("consumer", migrations);
        rc = db.schema_version("consumer") == 1 ? 0 : 1;
    }
    for (const char* suffix : {"", "-wal", "-shm"})
        std::remove((path + suffix).c_str());
    std::puts(rc == 0 ? "sqlite component: ok" : "sqlite component: wrong schema version");
    return rc;
}
