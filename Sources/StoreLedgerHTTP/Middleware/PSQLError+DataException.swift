import PostgresNIO

extension PSQLError {
    /// Whether PostgreSQL refused a value as data (SQLSTATE class 22: a NUL character in text, a number out of range, a
    /// text that is not the type asked for): what a request carried, not the database failing, so the answer is a 400,
    /// not a 503 that tells the client to retry the same request forever.
    var isDataException: Bool { serverInfo?[.sqlState]?.hasPrefix("22") == true }
}
