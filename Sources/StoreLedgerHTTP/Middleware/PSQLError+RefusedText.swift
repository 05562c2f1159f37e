import PostgresNIO

extension PSQLError {
    /// Whether PostgreSQL refused a text for its characters (SQLSTATE 22021, `character_not_in_repertoire`: a NUL, which
    /// text cannot hold): what a request carried, not the database failing, so the answer is a 400, not a 503 that
    /// tells the client to retry the same request forever. Other data exceptions (an overflow, a division by zero) can
    /// be the server's own and stay errors.
    var isRefusedText: Bool { serverInfo?[.sqlState] == "22021" }
}
