import Foundation
import StoreLedgerCore
import StoreLedgerCoreTestSupport
import StoreLedgerSimulation
import Testing

/// `SubscriptionFoldState.decode(storedJSON:)`, which the store uses for states its cache does not hold: the plain
/// reader reads back every text `storedJSON` writes, and everything else goes to `JSONDecoder`, so the result (value
/// or error) is always `JSONDecoder`'s, but for a state stored under other fold rules, which is refused.
@Suite("Core: stored fold states read back as JSONDecoder reads them")
struct FoldStateStoredJSONTests {
    /// The final fold state of every simulated lifecycle, with and without Apple's `data.status`, but the one whose
    /// current transaction was upgraded away from (its successor not known yet): that row keeps no state, and each new
    /// fact refolds it until the successor arrives (`mergeTransaction`).
    static func states() throws -> [(name: String, state: SubscriptionFoldState)] {
        try [true, false].flatMap { includesStatus in
            try SubscriptionLifecycles.all(includesStatus: includesStatus).compactMap { name, _, builder in
                let key = try #require(builder.facts.compactMap(\.subscriptionKey).first)
                let state = SubscriptionProjection.foldWithState(builder.facts, key: key).state
                guard name != "upgradeAwaitingItsSuccessor" else {
                    #expect(state == nil, "an upgraded current transaction is refolded, not merged")
                    return nil
                }
                return ("\(name) (data.status: \(includesStatus))", try #require(state))
            }
        }
    }

    /// `text` as a JSON object, changed by `change`, written back (slashes unescaped, as `storedJSON` writes them).
    static func changed(_ text: Data, _ change: (inout [String: Any]) -> Void) throws -> Data {
        var object = try #require(try JSONSerialization.jsonObject(with: text) as? [String: Any])
        change(&object)
        return try JSONSerialization.data(withJSONObject: object, options: [.withoutEscapingSlashes])
    }

    /// `decode(storedJSON:)` gives what `JSONDecoder` gives (the same state, or an error from both), and the plain
    /// reader takes the text or leaves it as `plainTakesIt` says.
    static func expectAsJSONDecoder(_ text: Data, plainTakesIt: Bool, _ label: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let expected = Result { try JSONDecoder().decode(SubscriptionFoldState.self, from: text) }
        let actual = Result { try SubscriptionFoldState.decode(storedJSON: text) }
        #expect((SubscriptionFoldState.plain(storedJSON: text) != nil) == plainTakesIt, "\(label): plain reader", sourceLocation: sourceLocation)
        switch (expected, actual) {
        case (.success(let expected), .success(let actual)):
            #expect(actual == expected, "\(label): a different state than JSONDecoder's", sourceLocation: sourceLocation)
        case (.failure, .failure): break
        case (.success, .failure(let error)):
            Issue.record("\(label): JSONDecoder reads it, decode(storedJSON:) throws \(error)", sourceLocation: sourceLocation)
        case (.failure(let error), .success):
            Issue.record("\(label): JSONDecoder throws \(error), decode(storedJSON:) reads it", sourceLocation: sourceLocation)
        }
    }

    /// Every lifecycle's state: its `storedJSON` is read by the plain reader to the state itself; `JSONEncoder`'s
    /// text of it (other key order, other spellings) decodes to the state too.
    @Test func everyLifecyclesStateReadsBack() throws {
        for (name, state) in try Self.states() {
            let stored = Data(try #require(state.storedJSON).utf8)
            #expect(SubscriptionFoldState.plain(storedJSON: stored) == state, "\(name)")
            #expect(try SubscriptionFoldState.decode(storedJSON: stored) == state, "\(name)")
            #expect(try SubscriptionFoldState.decode(storedJSON: JSONEncoder().encode(state)) == state, "\(name): JSONEncoder's text")
        }
    }

    /// Texts outside the plain shape go to `JSONDecoder`: its value or its error, never one of the reader's own.
    @Test func otherTextsGetJSONDecodersAnswer() throws {
        let (_, state) = try #require(try Self.states().first { $0.name.hasPrefix("upgradeRefundReversed") })
        let stored = Data(try #require(state.storedJSON).utf8)
        let text = String(decoding: stored, as: UTF8.self)
        let id = state.key.originalTransactionID.rawValue
        // A refunded and reinstated transaction: the text has revocation evidence and winners with stamps.
        #expect(text.contains("\"contested\":true") && text.contains("\"stamp\":{"))

        // Members the reader does not know are skipped, as JSONDecoder skips them.
        Self.expectAsJSONDecoder(
            try Self.changed(stored) { $0["addedLater"] = ["a": [1, 2.5, nil, true], "b": "x"] }, plainTakesIt: true, "unknown member")
        // A whole number written with a fraction: JSONDecoder's Double.
        Self.expectAsJSONDecoder(try Self.changed(stored) { $0["lastSignedAt"] = 1_700_000_000_000.5 }, plainTakesIt: false, "fractional instant")
        // An identifier as a JSON integer (StringIdentifier's leniency).
        Self.expectAsJSONDecoder(
            try Self.changed(stored) { $0["key"] = ["environment": "Sandbox", "originalTransactionID": 12345] }, plainTakesIt: false, "integer id")
        // An escape in a string.
        let escaped = text.replacingOccurrences(of: "\"originalTransactionID\":\"\(id)\"", with: "\"originalTransactionID\":\"\\u0030\(id)\"")
        #expect(escaped != text)
        Self.expectAsJSONDecoder(Data(escaped.utf8), plainTakesIt: false, "escaped string")
        // A member twice.
        Self.expectAsJSONDecoder(Data(("{\"hasNotifications\":false," + text.dropFirst()).utf8), plainTakesIt: false, "member twice")
        // Errors: a value a closed enumeration does not know, a required member null or missing, a winner without its value.
        Self.expectAsJSONDecoder(
            try Self.changed(stored) { $0["notificationStatus"] = ["stamp": ["rank": 1], "value": "no-such-status"] }, plainTakesIt: false,
            "unknown status")
        Self.expectAsJSONDecoder(try Self.changed(stored) { $0["hasNotifications"] = NSNull() }, plainTakesIt: false, "required member null")
        Self.expectAsJSONDecoder(try Self.changed(stored) { $0["transactions"] = nil }, plainTakesIt: false, "required member missing")
        Self.expectAsJSONDecoder(try Self.changed(stored) { $0["key"] = nil }, plainTakesIt: false, "key missing")
        Self.expectAsJSONDecoder(
            try Self.changed(stored) { $0["autoRenew"] = ["stamp": ["rank": 1, "time": 1_700_000_000_000]] }, plainTakesIt: false,
            "winner without value")
        Self.expectAsJSONDecoder(
            try Self.changed(stored) { $0["autoRenew"] = ["stamp": ["rank": 1, "time": 1_700_000_000_000], "value": NSNull()] }, plainTakesIt: true,
            "optional winner value null")
        Self.expectAsJSONDecoder(
            try Self.changed(stored) { $0["activeTransaction"] = ["time": 1_700_000_000_000] }, plainTakesIt: false, "stamp without rank")
        Self.expectAsJSONDecoder(Data(text.dropLast().utf8), plainTakesIt: false, "truncated")
    }

    /// A state stored under other fold rules is not merged into: without `rulesRevision` (stored before revisions,
    /// when the token fallback went by signed date) neither reader takes it, and under another revision
    /// `decode(storedJSON:)` refuses what `JSONDecoder` reads. The store then refolds the row from all its facts.
    @Test func aStateStoredUnderOtherRulesIsRefused() throws {
        let (_, state) = try #require(try Self.states().first { $0.name.hasPrefix("tokenOfAnEarlierPeriodRefundedLate") })
        #expect(state.rulesRevision == SubscriptionFoldState.currentRulesRevision)
        let stored = Data(try #require(state.storedJSON).utf8)
        #expect(String(decoding: stored, as: UTF8.self).contains("\"latestPurchasedAppAccountToken\":{"))

        let unrevised = try Self.changed(stored) { $0["rulesRevision"] = nil }
        #expect(SubscriptionFoldState.plain(storedJSON: unrevised) == nil)
        #expect(throws: (any Error).self) { try SubscriptionFoldState.decode(storedJSON: unrevised) }

        let older = try Self.changed(stored) { $0["rulesRevision"] = SubscriptionFoldState.currentRulesRevision - 1 }
        #expect(try JSONDecoder().decode(SubscriptionFoldState.self, from: older).rulesRevision == SubscriptionFoldState.currentRulesRevision - 1)
        #expect(throws: SubscriptionFoldState.OtherRulesRevision.self) { try SubscriptionFoldState.decode(storedJSON: older) }
    }
}
