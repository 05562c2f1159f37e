import Foundation
import StoreLedgerCore
import StoreLedgerCoreTestSupport
import StoreLedgerSimulation
import Testing

/// `TransactionPayload.decode(json:)`, `RenewalInfoPayload.decode(json:)` and `NotificationPayload.decode(json:)` read
/// Apple's plain JSON without `Codable` and must give exactly what `JSONDecoder` gives — the same value, or an error
/// where it throws — and `decodeStrippingNestedJWS` must drop exactly the two nested JWS members.
@Suite("Core: Apple payloads read without Codable")
struct CorePlainPayloadDecodingTests {
    /// JSON as the simulator signs it (sorted keys, slashes unescaped).
    static func json(_ value: some Encodable) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(value)
    }

    /// Every fact of every lifecycle the simulator and the projection tests play, with nested JWS texts set.
    static func facts() -> [LedgerFact] {
        let setup = LifecycleSetup(
            originalTransactionID: "2000000000007000", start: 1_735_689_600_000, bundleID: "com.example.storeledger",
            appAppleID: 1_234_567_890, renewals: 3
        )
        var facts = SimulatedLifecycle.allCases.flatMap { $0.facts(setup) }
        facts += SubscriptionLifecycles.all(includesStatus: true).flatMap(\.builder.facts)
        facts += PurchaseLifecycles.all().facts
        return facts.map { fact in
            guard case .notification(var notification) = fact, notification.payload.data != nil else { return fact }
            if notification.transaction != nil { notification.payload.data?.signedTransactionInfo = "eyJhbGciOiJFUzI1NiJ9.eyJ0IjoxfQ.c2ln" }
            if notification.renewalInfo != nil { notification.payload.data?.signedRenewalInfo = "eyJhbGciOiJFUzI1NiJ9.eyJyIjoxfQ.c2ln" }
            return .notification(notification)
        }
    }

    /// What `JSONDecoder` makes of `json`, or nil where it throws.
    static func reference<T: Decodable>(_ type: T.Type, _ json: Data) -> T? {
        try? JSONDecoder().decode(type, from: json)
    }

    /// Checks `decode(json:)` against `JSONDecoder` for each of the three models on one text.
    static func expectSameAsJSONDecoder(_ json: Data, _ label: String) {
        #expect((try? TransactionPayload.decode(json: json)) == reference(TransactionPayload.self, json), "\(label)")
        #expect((try? RenewalInfoPayload.decode(json: json)) == reference(RenewalInfoPayload.self, json), "\(label)")
        #expect((try? NotificationPayload.decode(json: json)) == reference(NotificationPayload.self, json), "\(label)")
    }

    /// The models as the simulator and Apple's samples write them are read directly (not through the fallback) and
    /// equal `JSONDecoder`'s.
    @Test func everySimulatedAndSampleFactReadsDirectlyAsJSONDecoderReadsIt() throws {
        var notifications = 0
        var transactions = 0
        var renewalInfos = 0
        for (index, fact) in Self.facts().enumerated() {
            switch fact {
            case .notification(let notification):
                let json = try Self.json(notification.payload)
                #expect(NotificationPayload.plain(json: json) == notification.payload, "notification \(index)")
                #expect(try NotificationPayload.decode(json: json) == Self.reference(NotificationPayload.self, json))
                notifications += 1
                if let transaction = notification.transaction {
                    let json = try Self.json(transaction)
                    #expect(TransactionPayload.plain(json: json) == transaction, "transaction of \(index)")
                    transactions += 1
                }
                if let renewalInfo = notification.renewalInfo {
                    let json = try Self.json(renewalInfo)
                    #expect(RenewalInfoPayload.plain(json: json) == renewalInfo, "renewal info of \(index)")
                    renewalInfos += 1
                }
            case .transaction(let transaction):
                #expect(TransactionPayload.plain(json: try Self.json(transaction)) == transaction, "transaction \(index)")
                transactions += 1
            case .renewalInfo(let renewalInfo):
                #expect(RenewalInfoPayload.plain(json: try Self.json(renewalInfo)) == renewalInfo, "renewal info \(index)")
                renewalInfos += 1
            }
        }
        #expect(notifications > 50 && transactions > 50 && renewalInfos > 10)

        // Apple's samples: pretty-printed, every field Apple documents.
        let transaction = try AppleSampleModels.data(named: "signedTransaction")
        #expect(try TransactionPayload.plain(json: transaction) == JSONDecoder().decode(TransactionPayload.self, from: transaction))
        let revoked = try AppleSampleModels.data(named: "signedTransactionWithRevocation")
        #expect(try TransactionPayload.plain(json: revoked) == JSONDecoder().decode(TransactionPayload.self, from: revoked))
        let renewal = try AppleSampleModels.data(named: "signedRenewalInfo")
        #expect(try RenewalInfoPayload.plain(json: renewal) == JSONDecoder().decode(RenewalInfoPayload.self, from: renewal))
        for name in ["signedNotification", "signedConsumptionRequestNotification"] {
            let notification = try AppleSampleModels.data(named: name)
            #expect(
                try NotificationPayload.plain(json: notification) == JSONDecoder().decode(NotificationPayload.self, from: notification), "\(name)")
        }
        // Rare shapes go through JSONDecoder and still decode the same.
        for name in [
            "signedSummaryNotification", "signedExternalPurchaseTokenNotification", "signedExternalPurchaseTokenSandboxNotification",
            "signedRescindConsentNotification",
        ] {
            let notification = try AppleSampleModels.data(named: name)
            #expect(NotificationPayload.plain(json: notification) == nil, "\(name)")
            #expect(try NotificationPayload.decode(json: notification) == JSONDecoder().decode(NotificationPayload.self, from: notification))
        }
    }

    /// Texts off the plain shape: each must decode as `JSONDecoder` decodes it, or fail where it fails.
    @Test(arguments: [
        #"{"transactionId":"1\u0030","price":10990}"#,  // an escape
        #"{"transactionId":"é","price":10990}"#,  // not ASCII
        #"{"transactionId":1234,"price":10990}"#,  // a numeric identifier
        #"{"transactionId":"1","price":10990.0}"#,  // a fraction
        #"{"transactionId":"1","price":1e3}"#,  // an exponent
        #"{"transactionId":"1","price":-0}"#,
        #"{"transactionId":"1","price":99999999999999999999}"#,  // out of range
        #"{"transactionId":"1","quantity":3000000000}"#,  // out of Int32
        #"{"transactionId":"1","price":"10990"}"#,  // a string where a number goes
        #"{"transactionId":"1","isUpgraded":1}"#,
        #"{"transactionId":"1","transactionId":"2"}"#,  // a key twice
        #"{"transactionId":"1"} x"#,  // trailing bytes
        #"{"transactionId":"1",}"#,  // a trailing comma
        #"{"transactionId":"1","price":null,"type":null,"signedDate":null}"#,
        #"{"signedDate":1700000000000.5,"purchaseDate":9007199254740993}"#,  // fractional, beyond 2^53
        #"{"unknown":{"a":[1,2.5e-3,true,false,null,"x",{"b":[]}]},"appAccountToken":"  "}"#,
        #"{"appAccountToken":" 7e3fb20b-4cdb-47cc-936d-99d65f608138 ","eligibleWinBackOfferIds":["a","b"]}"#,
        #"{"eligibleWinBackOfferIds":["a",1]}"#,
        #"{"notificationType":"DID_RENEW","data":{"status":1,"signedTransactionInfo":"a.b.c","bundleId":"x"},"summary":null}"#,
        #"{"notificationType":"DID_RENEW","data":null,"appData":{"bundleId":"x"}}"#,
        #"{"notificationType":"DID_RENEW","data":{"status":"1"}}"#,
        #"{"notificationType":"DID_RENEW","data":{"appAppleId":"123"}}"#,
        "\u{FEFF}{\"transactionId\":\"1\"}",  // a byte order mark
        " \n\t{ \"transactionId\" : \"1\" , \"price\" : 5 } \r\n",
        "{\"transactionId\":\"abcdefghijklmnopqrstuvwxyz\t0123\"}",  // a raw tab inside a long string
        "{\"transactionId\":\"abcdefghijklmnopqrstuvwxyz\u{7F}\u{1F}0123\"}",
        #"{"transactionId":"abcdefghijklmnopqrstuvwxyzé0123456789"}"#,
        #"{"transactionId":"abcdefghijklmnopqrstuvwxyz\"0123456789"}"#,
        #"{"transactionId":"abcdefghijklmnopqrstuvwxyz0123456789abcdefgh","price":1}"#,
        #"{"transactionId":"abcdefghijklmnopqrstuvwxyz0123456789abcdefgh"#,  // unterminated
        "[]", "{}", "", "null", #"{"a":tru}"#, #"{"a":01}"#, #"{"a":-}"#, #"{"a":1.}"#, #"{"a""#,
    ])
    func offThePlainShapeDecodesAsJSONDecoderDoes(_ text: String) {
        Self.expectSameAsJSONDecoder(Data(text.utf8), text)
    }

    /// The payload text without its nested JWS members is the same JSON minus exactly those two members of `data`
    /// (what PostgreSQL's `#-` leaves), for every simulated notification and Apple's sample.
    @Test func strippingDropsExactlyTheNestedJWSMembers() throws {
        var samples = try Self.facts().compactMap { fact -> Data? in
            guard case .notification(let notification) = fact else { return nil }
            return try Self.json(notification.payload)
        }
        samples.append(try AppleSampleModels.data(named: "signedNotification"))
        samples.append(Data(#"{"data":{"signedTransactionInfo":"a.b.c"},"x":1}"#.utf8))
        samples.append(Data(#"{"data":{"signedRenewalInfo":"a.b.c", "status" : 1 ,"signedTransactionInfo":"d.e.f"}}"#.utf8))
        samples.append(Data(#"{"data":{}}"#.utf8))
        var stripped = 0
        for json in samples {
            let (payload, withoutNestedJWS) = try NotificationPayload.decodeStrippingNestedJWS(json: json)
            #expect(payload == (try JSONDecoder().decode(NotificationPayload.self, from: json)))
            let without = try #require(withoutNestedJWS)
            var expected = try #require(try JSONSerialization.jsonObject(with: json) as? [String: Any])
            if var data = expected["data"] as? [String: Any] {
                data["signedTransactionInfo"] = nil
                data["signedRenewalInfo"] = nil
                expected["data"] = data
            }
            let actual = try #require(try JSONSerialization.jsonObject(with: without) as? [String: Any])
            #expect(NSDictionary(dictionary: actual).isEqual(to: expected), "\(String(decoding: without, as: UTF8.self))")
            if without.count < json.count { stripped += 1 }
        }
        #expect(stripped > 50)
    }
}
