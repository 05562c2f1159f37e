extension AsyncSequence {
    /// Every element, reading the sequence to its end.
    ///
    /// A Postgres row sequence reports an error that follows its rows (a failing statement after the first row, a
    /// broken connection) only to a reader that reaches the end: leaving a `for try await` loop early abandons the
    /// rest and hides it. Store code reads results with this (or a full loop) and never returns from inside one;
    /// `StoreLintTests` keeps it that way.
    @discardableResult
    package func readToEnd() async throws -> [Element] {
        var elements: [Element] = []
        for try await element in self { elements.append(element) }
        return elements
    }

    /// The first element (nil when there is none), after reading the sequence to its end.
    package func firstAfterReadingAll() async throws -> Element? {
        try await readToEnd().first
    }
}
