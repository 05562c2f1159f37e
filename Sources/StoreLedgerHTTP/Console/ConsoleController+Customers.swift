import Foundation
import Hummingbird
import StoreLedgerStore

extension ConsoleController {
    /// `GET /console/customers?q=…`: the search form; one customer found goes straight to its page (303), several
    /// are listed, none says so.
    func customerSearch(_ request: Request, session: ConsoleSignedIn, context: some RequestContext) async throws -> Response {
        let q = ConsoleForm(queryOf: request)["q"]?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        var values: [String: Any] = ["q": q]
        if q.count > CustomerLookupStore.maximumKeyLength {
            values["searchError"] = "The search is longer than \(CustomerLookupStore.maximumKeyLength) characters: no id or token is that long."
        } else if !q.isEmpty {
            let page = try await customers.purchases(matching: q, logger: context.logger)
            let purchases = page.purchases
            // A customer per key and app: in a ledger of several apps, user 42 of one app is not user 42 of another.
            var groups: [(key: String, app: String?, purchases: [CustomerPurchase])] = []
            for purchase in purchases {
                if let index = groups.firstIndex(where: { $0.key == purchase.customerKey && $0.app == purchase.bundleID }) {
                    groups[index].purchases.append(purchase)
                } else {
                    groups.append((purchase.customerKey, purchase.bundleID, [purchase]))
                }
            }
            let severalApps = Set(groups.map(\.app)).count > 1
            func path(_ group: (key: String, app: String?, purchases: [CustomerPurchase])) -> String {
                let path = "/console/customers/\(ConsoleFormat.pathComponent(group.key))"
                guard severalApps, let app = group.app else { return path }
                return path + "?app=" + ConsoleFormat.queryValue(app)
            }
            if groups.count == 1 { return Self.redirect(path(groups[0])) }
            values["searched"] = true
            values["hasResults"] = !groups.isEmpty
            values["count"] = groups.count
            if page.total > purchases.count {
                values["partial"] = "Only the first \(purchases.count) of \(page.total) matching purchases are grouped here."
            }
            values["results"] = groups.map { group -> [String: Any] in
                let first = group.purchases[0]
                return [
                    "key": group.key, "href": path(group), "app": group.app ?? "—", "userID": first.userID ?? "—",
                    "token": first.appAccountToken ?? "—", "purchases": group.purchases.count,
                    "entitled": group.purchases.contains(where: \.entitledNow) ? "yes" : "no",
                    "matchedBy": Set(group.purchases.map(\.matchedBy)).sorted().joined(separator: ", "),
                ]
            }
        }
        return render("customers", session: session, title: "Customers", nav: "Customers", values)
    }

    /// Subscriptions and purchases per customer page, each with its timeline.
    static let customerPageSize = 20

    /// `GET /console/customers/{key}?page=N`: the subscriptions and purchases `key` names, ``customerPageSize`` at a
    /// time, each with its state now and timeline.
    func customerPage(_ request: Request, session: ConsoleSignedIn, context: some RequestContext) async throws -> Response {
        let key = context.decodedParameter("key") ?? ""
        let pageText = ConsoleForm(queryOf: request)["page"]
        guard let pageNumber = pageText.map({ Int($0) }) ?? 1, pageNumber >= 1, pageNumber <= 1_000_000 else {
            return render(
                "message", status: .badRequest, session: session, title: "Bad request",
                ["heading": "Bad request", "message": "page must be a whole number from 1 (got “\(pageText ?? "")”)."]
            )
        }
        let size = Self.customerPageSize
        let app = ConsoleForm(queryOf: request)["app"].flatMap { $0.isEmpty ? nil : $0 }
        let page = try await customers.purchases(matching: key, app: app, limit: size, offset: (pageNumber - 1) * size, logger: context.logger)
        let purchases = page.purchases
        // Every purchase's timeline in one statement (a token shared by many purchases is one round trip, not one each).
        let timelines = try await customers.timelines(of: purchases.map { ($0.environment, $0.originalTransactionID) }, logger: context.logger)
        var sections: [[String: Any]] = []
        for (index, (purchase, timeline)) in zip(purchases, timelines).enumerated() {
            var section: [String: Any] = [
                "index": index, "kind": purchase.kind == "subscription" ? "subscription" : "purchase",
                "kindLabel": purchase.kind == "subscription" ? "subscription" : (purchase.productType ?? "one-time purchase"),
                "environment": purchase.environment, "product": purchase.productID ?? "—",
                "state": purchase.entitledNow ? "entitled" : "not entitled", "stateClass": purchase.entitledNow ? "good" : "bad",
                "reason": purchase.reason, "entitlements": purchase.entitlements.isEmpty ? "none" : purchase.entitlements.joined(separator: ", "),
                "originalTransactionID": purchase.originalTransactionID, "transactionID": purchase.transactionID ?? "—",
                "userID": purchase.userID ?? "—", "appAccountToken": purchase.appAccountToken ?? "—",
                "status": "\(purchase.status) (now: \(purchase.statusNow))",
                "purchasedAt": ConsoleFormat.time(purchase.purchasedAt), "expiresAt": ConsoleFormat.time(purchase.expiresAt),
                "endsAt": ConsoleFormat.time(purchase.endsAt), "autoRenew": purchase.autoRenew.map { $0 ? "on" : "off" } ?? "—",
                "bundleID": purchase.bundleID ?? "—", "ownership": purchase.ownership ?? "—",
                "timeline": Self.timelineValues(timeline, periodic: purchase.kind == "subscription"),
            ]
            if timeline.count >= CustomerLookupStore.timelineLimit { section["truncated"] = true }
            sections.append(section)
        }
        var values: [String: Any] = ["key": key, "purchases": sections, "total": page.total, "found": page.total > 0]
        if let app { values["app"] = app }
        let pageCount = (page.total + size - 1) / size
        if pageCount > 1 {
            let path =
                "/console/customers/\(ConsoleFormat.pathComponent(key))?" + (app.map { "app=\(ConsoleFormat.queryValue($0))&" } ?? "") + "page="
            let first = (pageNumber - 1) * size + 1
            var paged: [String: Any] = [
                "pageNumber": pageNumber, "pageCount": pageCount,
                "showing": purchases.isEmpty ? "none (past the last page)" : "\(first)–\(first + purchases.count - 1)",
            ]
            if pageNumber > 1 { paged["previousPath"] = "\(path)\(min(pageNumber - 1, pageCount))" }
            if pageNumber < pageCount { paged["nextPath"] = "\(path)\(pageNumber + 1)" }
            values["paged"] = paged
        }
        return render("customer", session: session, title: "Customer \(key)", nav: "Customers", values)
    }

    /// Apple's `data.status` values.
    static func statusName(_ status: Int) -> String {
        switch status {
        case 1: "1 active"
        case 2: "2 expired"
        case 3: "3 billing retry"
        case 4: "4 grace period"
        case 5: "5 revoked"
        default: String(status)
        }
    }

    /// The timeline's entries as template values, each with what it changed against what was known before it. An entry
    /// about a transaction of an earlier period than the current one (a refund of an older period, a sync that fetched
    /// the first period anew) is marked as such and compared with what was known of that transaction only: it changes
    /// nothing of the subscription's state now, and against the current period it would read as the expiry moving back.
    /// Only a subscription (`periodic`) has periods: a one-time purchase's other transactions are its copies restored on
    /// other devices, which stand or fall with it (a refund of the purchase revokes them all).
    static func timelineValues(_ entries: [TimelineEntry], periodic: Bool = true) -> [[String: Any]] {
        var known: [String: String] = [:]
        var knownOfTransaction: [String: [String: String]] = [:]
        var current: (transactionID: String, purchasedAt: Date?, expiresAt: Date?)?
        return entries.map { entry in
            let facts: [(String, String?)] = [
                ("product", entry.productID), ("expires", entry.expiresAt.map { ConsoleFormat.time($0) }),
                ("price", ConsoleFormat.price(entry.price, entry.currency)), ("auto-renew", entry.autoRenew.map { $0 ? "on" : "off" }),
                ("status", entry.status.map(statusName)), ("revoked", entry.revokedAt.map { ConsoleFormat.time($0) }),
                ("grace period ends", entry.gracePeriodExpiresAt.map { ConsoleFormat.time($0) }),
                ("transaction", entry.transactionID),
            ]
            // Earlier: purchased before the current period was (its start; an upgrade to a shorter product is purchased
            // later though it expires sooner), or, without purchase dates, expiring before it.
            var earlierPeriod: String?
            if periodic, let id = entry.transactionID, let period = current, id != period.transactionID {
                if let purchased = entry.purchasedAt, let currentPurchased = period.purchasedAt {
                    if purchased < currentPurchased { earlierPeriod = id }
                } else if let expires = entry.expiresAt, let currentExpires = period.expiresAt, expires < currentExpires {
                    earlierPeriod = id
                }
            }
            let changes: [String]
            if let earlierPeriod {
                changes = Self.changes(facts, against: &knownOfTransaction[earlierPeriod, default: [:]])
            } else {
                changes = Self.changes(facts, against: &known)
                if let id = entry.transactionID {
                    _ = Self.changes(facts, against: &knownOfTransaction[id, default: [:]])
                    if entry.purchasedAt != nil || entry.expiresAt != nil { current = (id, entry.purchasedAt, entry.expiresAt) }
                }
            }
            var values: [String: Any] = [
                "signedAt": ConsoleFormat.time(entry.signedAt), "type": entry.type, "subtype": entry.subtype ?? "",
                "eventID": entry.eventID, "product": entry.productID ?? "—", "changes": changes, "hasChanges": !changes.isEmpty,
            ]
            // Every optional value is set, to false where the entry has none: a mustache section looks a missing name
            // up in the enclosing contexts, and the purchase's section has its own (today's) expiry, transaction and
            // status, which an ownership change or a renewal info would otherwise show as if it had said them.
            values["price"] = ConsoleFormat.price(entry.price, entry.currency) ?? false
            values["expiresAt"] = entry.expiresAt.map { ConsoleFormat.time($0) } ?? false
            values["transactionID"] = entry.transactionID ?? false
            values["status"] = entry.status.map(statusName) ?? false
            values["earlierPeriod"] = earlierPeriod ?? false
            return values
        }
    }

    /// What `facts` (name, value) say that `known` did not, as `name: before → after` or `name: value`; `known` takes them.
    static func changes(_ facts: [(String, String?)], against known: inout [String: String]) -> [String] {
        var changes: [String] = []
        for (name, value) in facts {
            guard let value else { continue }
            if let before = known[name] {
                if before != value { changes.append("\(name): \(before) → \(value)") }
            } else {
                changes.append("\(name): \(value)")
            }
            known[name] = value
        }
        return changes
    }
}
