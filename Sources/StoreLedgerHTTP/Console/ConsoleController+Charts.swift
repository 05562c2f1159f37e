import Foundation
import Hummingbird
import NIOCore
import StoreLedgerStore

extension ConsoleController {
    /// `GET /console/charts?from=&to=&app=&environment=&product=`: every chart as SVG, a table and a CSV link.
    func chartsPage(_ request: Request, session: ConsoleSignedIn, context: some RequestContext) async throws -> Response {
        let query = ConsoleChartQuery { request.uri.queryParameters.get($0) }
        let snapshot = try await freshSnapshot(context: context)
        let loader = ChartLoader(store: charts, cache: chartCache, logger: context.logger, version: "\(snapshot?.timeIntervalSince1970 ?? 0)")
        var figures: [[String: Any]] = []
        for chart in ConsoleChart.allCases {
            let table =
                snapshot == nil ? ChartTable(columns: [], rows: [], points: [], unit: "") : try await chart.table(query.filter, loader: loader).0
            figures.append([
                "name": chart.rawValue, "title": chart.title, "note": chart.note, "query": query.queryString,
                "svg": ChartSVG.render(table, title: chart.title), "columns": table.columns,
                "rows": table.rows.map { ["cells": $0] },
            ])
        }
        var values: [String: Any] = [
            "from": ConsoleFormat.month(query.filter.fromMonth), "to": ConsoleFormat.month(query.filter.toMonth),
            "app": query.filter.app ?? "", "environment": query.filter.environment ?? "", "product": query.filter.product ?? "",
            "charts": figures, "computedAt": snapshot.map { ConsoleFormat.time($0) } ?? "not yet",
            "refreshMinutes": configuration.chartRefreshMinutes,
        ]
        if snapshot == nil { values["filterError"] = "The chart numbers are being computed for the first time: reload in a minute." }
        if let error = query.error { values["filterError"] = error }
        return render("charts", session: session, title: "Charts", nav: "Charts", values)
    }

    /// A snapshot that took less than this is retaken while the page waits whenever events arrived since it was taken.
    static let synchronousRefreshLimit = 2_000.0

    /// When the snapshot the charts read was taken (nil: none yet). A missing snapshot is taken now; a stale one too
    /// when taking it is quick (under ``synchronousRefreshLimit`` ms: small ledgers always show what is in the log);
    /// otherwise the background refresher keeps it within `CONSOLE_CHART_REFRESH_MINUTES`.
    func freshSnapshot(context: some RequestContext) async throws -> Date? {
        let state = try await charts.snapshot(logger: context.logger)
        guard state.takenAt == nil || (state.behind && state.durationMilliseconds < Self.synchronousRefreshLimit) else { return state.takenAt }
        try await charts.refresh(minimumAge: 0, logger: context.logger)
        return try await charts.snapshot(logger: context.logger).takenAt
    }

    /// `GET /console/charts/NAME.csv?…`: one chart's table as a CSV download.
    func chartCSV(_ request: Request, context: some RequestContext) async throws -> Response {
        let file = Self.parameter("file", of: context) ?? ""
        guard file.hasSuffix(".csv"), let chart = ConsoleChart(rawValue: String(file.dropLast(4))) else {
            throw HTTPError(.notFound, message: "There is no chart \(file).")
        }
        let query = ConsoleChartQuery { request.uri.queryParameters.get($0) }
        guard let snapshot = try await freshSnapshot(context: context) else {
            throw HTTPError(.serviceUnavailable, message: "The chart numbers are being computed for the first time: try again in a minute.")
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
