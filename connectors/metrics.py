"""Prometheus metrics of the live runs and their connectors, read from the database at
scrape time by a custom collector: every process (web, workers) writes its progress to
the database, so one scrape of any web process sees all of it, and nothing is counted in
process memory (which would be wrong as soon as there are two processes).

Runs: those not finished (created, running, paused). Labels: `run` (its id) and
`circuit` (its circuit's id); a connector adds `connector`, `kind` and `node`.
"""
from __future__ import annotations

import math

from django.conf import settings
from django.db.models import Count, OuterRef, Subquery, Sum
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import CollectorRegistry

from runs.models import Push, Run, RunStatus, TickOutput

from .models import Connector
from .status import lag_of, rate_of, shown_state

LIVE = (RunStatus.CREATED, RunStatus.RUNNING, RunStatus.PAUSED)
CONNECTOR_STATES = ("running", "paused", "retrying", "failed")
RUN_LABELS = ["run", "circuit"]
CONNECTOR_LABELS = ["run", "circuit", "connector", "kind", "node"]


class DatabaseCollector:
    """Reads the live runs, their ticks, lag and connectors when Prometheus scrapes."""

    def describe(self):
        return []  # nothing read at registration: everything is read at scrape time

    def collect(self):
        last_ms = TickOutput.objects.filter(run=OuterRef("pk")).order_by("-tick").values("ms")[:1]
        runs = list(Run.objects.filter(status__in=LIVE).order_by("pk")
                    .annotate(last_ms=Subquery(last_ms)).values("pk", "circuit_id", "status", "current_tick", "last_ms"))
        ids = [r["pk"] for r in runs]
        tick_ms = {r["run_id"]: r["ms"] or 0.0 for r in
                   TickOutput.objects.filter(run_id__in=ids).values("run_id").annotate(ms=Sum("ms"))}
        lag = {r["run_id"]: r for r in Push.objects.filter(run_id__in=ids, applied_tick__isnull=True)
               .values("run_id").annotate(n=Count("id"), rows=Sum("row_count"))}

        status = GaugeMetricFamily("dbspweb_run_status", "1 for the run's status (created, running, paused)",
                                   labels=[*RUN_LABELS, "status"])
        ticks = CounterMetricFamily("dbspweb_run_ticks", "ticks committed", labels=RUN_LABELS)
        seconds = CounterMetricFamily("dbspweb_run_tick_seconds", "engine time of all committed ticks",
                                      labels=RUN_LABELS)
        last = GaugeMetricFamily("dbspweb_run_last_tick_seconds", "engine time of the last committed tick",
                                 labels=RUN_LABELS)
        lag_pushes = GaugeMetricFamily("dbspweb_run_lag_pushes", "accepted pushes not applied yet", labels=RUN_LABELS)
        lag_rows = GaugeMetricFamily("dbspweb_run_lag_rows", "rows of the accepted pushes not applied yet",
                                     labels=RUN_LABELS)
        lag_ticks = GaugeMetricFamily("dbspweb_run_lag_ticks", "ticks needed to apply the waiting pushes",
                                      labels=RUN_LABELS)
        statuses = {r["pk"]: r["status"] for r in runs}
        for r in runs:
            labels = [str(r["pk"]), str(r["circuit_id"])]
            for choice in LIVE:
                status.add_metric([*labels, str(choice)], 1.0 if r["status"] == choice else 0.0)
            ticks.add_metric(labels, float(r["current_tick"] + 1))
            seconds.add_metric(labels, tick_ms.get(r["pk"], 0.0) / 1000)
            if r["last_ms"] is not None:
                last.add_metric(labels, r["last_ms"] / 1000)
            waiting = lag.get(r["pk"], {})
            pushes = waiting.get("n", 0)
            lag_pushes.add_metric(labels, float(pushes))
            lag_rows.add_metric(labels, float(waiting.get("rows") or 0))
            lag_ticks.add_metric(labels, float(math.ceil(pushes / max(settings.TICK_MAX_PUSHES, 1))))
        yield from (status, ticks, seconds, last, lag_pushes, lag_rows, lag_ticks)

        records_in = CounterMetricFamily("dbspweb_connector_records_in", "records a source pushed",
                                         labels=CONNECTOR_LABELS)
        records_out = CounterMetricFamily("dbspweb_connector_records_out", "records a sink wrote",
                                          labels=CONNECTOR_LABELS)
        last_tick = GaugeMetricFamily("dbspweb_connector_last_tick", "the last tick a sink wrote (-1: none)",
                                      labels=CONNECTOR_LABELS)
        state = GaugeMetricFamily("dbspweb_connector_state", "1 for the connector's state (running, paused, "
                                  "retrying, failed)", labels=[*CONNECTOR_LABELS, "state"])
        errors = CounterMetricFamily("dbspweb_connector_errors", "failures and transient errors",
                                     labels=CONNECTOR_LABELS)
        error_at = GaugeMetricFamily("dbspweb_connector_last_error_timestamp_seconds",
                                     "when the last error happened (Unix time)", labels=CONNECTOR_LABELS)
        dead_letters = CounterMetricFamily("dbspweb_connector_dead_letters", "records a source sent to its dead letters",
                                           labels=CONNECTOR_LABELS)
        lag_gauge = GaugeMetricFamily("dbspweb_connector_lag", "how far behind it is, in `unit` (records, files, "
                                      "bytes; a sink: ticks); absent when not knowable", labels=[*CONNECTOR_LABELS, "unit"])
        rate = GaugeMetricFamily("dbspweb_connector_rows_per_second", "records in (a source) or out (a sink) a second "
                                 "over the last 30 s", labels=CONNECTOR_LABELS)
        circuit_of = {r["pk"]: str(r["circuit_id"]) for r in runs}
        current = {r["pk"]: r["current_tick"] for r in runs}
        for connector in Connector.objects.filter(run_id__in=ids).order_by("run_id", "name").only(
                "run_id", "name", "kind", "node", "state", "records_in", "records_out", "last_tick", "errors", "error_at",
                "dead_letters", "lag", "lag_unit", "rate_samples", "created_at"):
            c = connector.__dict__
            labels = [str(c["run_id"]), circuit_of[c["run_id"]], c["name"], c["kind"], c["node"]]
            shown = shown_state(c["state"], statuses[c["run_id"]])
            dead_letters.add_metric(labels, float(c["dead_letters"]))
            amount, unit = lag_of(connector, current[c["run_id"]])
            if amount is not None:
                lag_gauge.add_metric([*labels, unit], float(amount))
            rate.add_metric(labels, rate_of(c["rate_samples"], c["records_in"] if connector.is_source else c["records_out"],
                                            c["created_at"]))
            records_in.add_metric(labels, float(c["records_in"]))
            records_out.add_metric(labels, float(c["records_out"]))
            last_tick.add_metric(labels, float(c["last_tick"]))
            for choice in CONNECTOR_STATES:
                state.add_metric([*labels, choice], 1.0 if shown == choice else 0.0)
            errors.add_metric(labels, float(c["errors"]))
            if c["error_at"] is not None:
                error_at.add_metric(labels, c["error_at"].timestamp())
        yield from (records_in, records_out, last_tick, state, errors, error_at, dead_letters, lag_gauge, rate)


def registry() -> CollectorRegistry:
    """A registry of the database collector alone (no process metrics: they would describe
    whichever web process answered, not the service)."""
    found = CollectorRegistry(auto_describe=False)
    found.register(DatabaseCollector())
    return found
