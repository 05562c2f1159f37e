import Foundation
import Hummingbird
import NIOCore
import StoreLedgerStore

extension ConsoleController {
    /// `GET /console/charts?from=&to=&app=&environment=&product=`: every chart as SVG, a table and a CSV link.
    func chartsPage(_ request: Request, session: ConsoleSignedIn, context: some RequestContext) async throws -> Response {
        let query = ConsoleChartQuery { request.uri.queryParameters.get($0) }
        let loader = ChartLoader(store: charts, cache: chartCache, logger: context.logger)
        var figures: [[String: Any]] = []
        var oldest = Date()
        for chart in ConsoleChart.allCases {
            let (table, at) = try await chart.table(query.filter, loader: loader)
            oldest = min(oldest, at)
            figures.append([
                "name": chart.rawValue, "title": chart.title, "note": chart.note, "query": query.queryString,
                "svg": ChartSVG.render(table, title: chart.title), "columns": table.columns,
                "rows": table.rows.map { ["cells": $0] },
            ])
        }
        var values: [String: Any] = [
            "from": ConsoleFormat.month(query.filter.fromMonth), "to": ConsoleFormat.month(query.filter.toMonth),
            "app": query.filter.app ?? "", "environment": query.filter.environment ?? "", "product": query.filter.product ?? "",
            "charts": figures, "computedAt": ConsoleFormat.time(oldest), "cacheMinutes": Int(chartCache.lifetime / 60),
        ]
        if let error = query.error { values["filterError"] = error }
        return render("charts", session: session, title: "Charts", nav: "Charts", values)
    }

    /// `GET /console/charts/NAME.csv?…`: one chart's table as a CSV download.
    func chartCSV(_ request: Request, context: some RequestContext) async throws -> Response {
        let file = Self.parameter("file", of: context) ?? ""
        guard file.hasSuffix(".csv"), let chart = ConsoleChart(rawValue: String(file.dropLast(4))) else {
            throw HTTPError(.notFound, message: "There is no chart \(file).")
        }
        let query = ConsoleChartQuery { request.uri.queryParameters.get($0) }
        let (table, _) = try await chart.table(query.filter, loader: ChartLoader(store: charts, cache: chartCache, logger: context.logger))
        return Response(
            status: .ok,
            headers: [.contentType: "text/csv; charset=utf-8", .contentDisposition: "attachment; filename=\"\(chart.rawValue).csv\""],
            body: .init(byteBuffer: ByteBuffer(string: table.csv))
        )
    }
}
