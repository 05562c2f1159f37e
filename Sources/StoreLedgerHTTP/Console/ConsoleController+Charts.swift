import Foundation
import Hummingbird
import NIOCore
import StoreLedgerStore

extension ConsoleController {
    /// `GET /console/charts?from=&to=&app=&environment=&product=`: every chart as SVG, a table and a CSV link, from the
    /// sums the last snapshot took (never computed over the ledger while the page waits, except on a small one).
    func chartsPage(_ request: Request, session: ConsoleSignedIn, context: some RequestContext) async throws -> Response {
        let form = ConsoleForm(queryOf: request)
        let query = ConsoleChartQuery { form[$0] }
        let snapshot = try await freshSnapshot(context: context)
        let loader = ChartLoader(store: charts, cache: chartCache, logger: context.logger, version: "\(snapshot.takenAt?.timeIntervalSince1970 ?? 0)")
        let computedAt = snapshot.takenAt.map { ConsoleFormat.time($0) } ?? "never"
        var figures: [[String: Any]] = []
        for chart in ConsoleChart.allCases {
            let table =
                snapshot.takenAt == nil
                ? ChartTable(columns: [], rows: [], points: [], unit: "") : try await chart.table(query.filter, loader: loader).0
            figures.append([
                "name": chart.rawValue, "title": chart.title, "note": chart.note, "query": query.queryString,
                "svg": ChartSVG.render(table, title: chart.title), "columns": table.columns,
                "rows": table.rows.map { ["cells": $0] }, "computedAt": computedAt,
            ])
        }
        var values: [String: Any] = [
            "from": ConsoleFormat.month(query.filter.fromMonth), "to": ConsoleFormat.month(query.filter.toMonth),
            "app": query.filter.app ?? "", "environment": query.environmentValue, "product": query.filter.product ?? "",
            "charts": figures, "computedAt": computedAt, "refreshMinutes": configuration.chartRefreshMinutes,
        ]
        if snapshot.takenAt == nil {
            values["preparing"] =
                "The charts are being prepared: their numbers are computed in the background (on a large ledger this takes a while) "
                + "and have never been computed yet. Reload in a minute."
        } else if snapshot.behind {
            values["behind"] = "Events arrived since; the next computation includes them."
        }
        if let error = query.error { values["filterError"] = error }
        return render("charts", session: session, title: "Charts", nav: "Charts", values)
    }

    /// When the last snapshot took less than this many milliseconds, a page waits for a new one whenever events
    /// arrived since it was taken (small ledgers always show what is in the log).
    static let synchronousRefreshLimit = 500.0

    /// The snapshot the charts read: when it was taken (nil: never) and whether events arrived since. A page never waits
    /// for a snapshot of a large ledger: without one it says the charts are being prepared (the background refresher,
    /// ``ConsoleChartRefresher``, takes it). It waits only when the ledger is small — at most
    /// ``firstSnapshotWaitTransactions`` transactions (a bounded count) — and there is no snapshot yet or events arrived
    /// since it, or when events arrived since a snapshot that took under ``synchronousRefreshLimit`` ms.
    func freshSnapshot(context: some RequestContext) async throws -> (takenAt: Date?, behind: Bool) {
        let state = try await charts.snapshot(logger: context.logger)
        let wait: Bool
        if state.takenAt != nil, !state.behind {
            wait = false  // current
        } else if state.takenAt != nil, state.durationMilliseconds < Self.synchronousRefreshLimit {
            wait = true  // outdated, and quick to take again
        } else {
            wait = try await charts.isSmall(atMost: firstSnapshotWaitTransactions, logger: context.logger)  // none, or slow to take
        }
        guard wait, try await charts.refresh(minimumAge: 0, logger: context.logger) else { return (state.takenAt, state.behind) }
        let taken = try await charts.snapshot(logger: context.logger)
        return (taken.takenAt, taken.behind)
    }

    /// `GET /console/charts/NAME.csv?…`: one chart's table as a CSV download.
    func chartCSV(_ request: Request, context: some RequestContext) async throws -> Response {
        let file = context.decodedParameter("file") ?? ""
        guard file.hasSuffix(".csv"), let chart = ConsoleChart(rawValue: String(file.dropLast(4))) else {
            throw HTTPError(.notFound, message: "There is no chart \(file).")
        }
        let form = ConsoleForm(queryOf: request)
        let query = ConsoleChartQuery { form[$0] }
        guard let snapshot = try await freshSnapshot(context: context).takenAt else {
            throw HTTPError(
                .serviceUnavailable, headers: [.retryAfter: "60"],
                message: "The chart numbers are being prepared (computed in the background for the first time): try again in a minute."
            )
        }
        let loader = ChartLoader(store: charts, cache: chartCache, logger: context.logger, version: "\(snapshot.timeIntervalSince1970)")
        let (table, _) = try await chart.table(query.filter, loader: loader)
        return Response(
            status: .ok,
            headers: [.contentType: "text/csv; charset=utf-8", .contentDisposition: "attachment; filename=\"\(chart.rawValue).csv\""],
            body: .init(byteBuffer: ByteBuffer(string: table.csv))
        )
    }
}
