import Foundation
import NIOCore
import StoreLedgerCore
import StoreLedgerStore
import Testing

@testable import StoreLedgerProcessing

/// How a rebuild splits consecutive pages into those written side by side and the re-deliveries applied after them:
/// a notification a later page delivers again (Apple's retries) must commit after the page that delivered it first.
@Suite("Processing: pages written side by side")
struct SideBySideSplitTests {
    /// A page of events `ids`, each a notification with the UUID `uuids[i]` (nil: a rejected event, no notification).
    func page(_ ids: [Int64], _ uuids: [String?]) -> Rebuilder.PreparedPage {
        let events = ids.map {
            ClaimedEvent(
                id: EventID($0), attempt: 1, receivedAt: Date(timeIntervalSince1970: 0), source: .appleNotification, environmentHint: nil,
                body: ByteBuffer(), requestID: nil)
        }
        let prepared: [PreparedEvent] = zip(events, uuids).map { event, uuid in
            guard let uuid else { return .rejected(event, reason: "malformed") }
            var payload = NotificationPayload()
            payload.notificationUUID = NotificationUUID(uuid)
            return .notification(event, NotificationFact(payload: payload), .init(payload: Data(), contentDigest: []))
        }
        return Rebuilder.PreparedPage(events: events, prepared: prepared)
    }

    /// Each page's event ids.
    func ids(_ pages: [Rebuilder.PreparedPage]) -> [[Int64]] {
        pages.map { $0.events.map(\.id.rawValue) }
    }

    @Test func pagesWithoutAnEarlierPagesNotificationAreWrittenSideBySideAsTheyAre() {
        let pages = [page([1, 2, 3], ["a", "b", nil]), page([4, 5], ["c", "d"])]
        let (sideBySide, after) = Rebuilder.splitForSideBySide(pages)
        #expect(ids(sideBySide) == [[1, 2, 3], [4, 5]])
        #expect(after.isEmpty)
        // Each event keeps its prepared result.
        #expect(sideBySide.flatMap(\.prepared).map(\.notificationUUID) == ["a", "b", nil, "c", "d"].map { $0.map(NotificationUUID.init) })
    }

    @Test func aNotificationAnEarlierPageDeliveredIsHeldBackInLogOrder() {
        let pages = [page([1, 2], ["a", "b"]), page([3, 4, 5], ["c", "a", nil]), page([6, 7, 8], ["b", "d", "c"])]
        let (sideBySide, after) = Rebuilder.splitForSideBySide(pages)
        #expect(ids(sideBySide) == [[1, 2], [3, 5], [7]])
        #expect(ids(after) == [[4], [6, 8]])
        #expect(after.flatMap(\.prepared).map(\.notificationUUID) == ["a", "b", "c"].map { NotificationUUID($0) })
    }

    @Test func aRepeatWithinOnePageStaysInThatPageAndAPageOfRepeatsOnlyIsHeldWhole() {
        let pages = [page([1, 2], ["a", "a"]), page([3, 4], ["a", "a"])]
        let (sideBySide, after) = Rebuilder.splitForSideBySide(pages)
        #expect(ids(sideBySide) == [[1, 2]])
        #expect(ids(after) == [[3, 4]])
    }
}
