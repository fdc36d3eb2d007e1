#!/usr/bin/env node
// Builds the example repository Strata's demo, docs and tests run against: "Harbor", a
// small parcel-tracking project in TypeScript, Python and Go with a deterministic git
// history (fixed authors, emails and dates; no network) of renames, deletions, a binary
// file and a merge commit. Running it twice gives the same commit hashes.
//
//   node scripts/make-demo-repo.mjs                  # (re)build examples/demo-repo/
//   node scripts/make-demo-repo.mjs --out DIR        # build into DIR (must be new or a previous build)
//   node scripts/make-demo-repo.mjs --no-git         # the final tree only, without history
//
// Programmatic use (tests, benchmarks, scripts/demo.mjs): `makeDemoRepo({ out })`.
import { execFileSync } from "node:child_process"
import { createHash } from "node:crypto"
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs"
import { devNull } from "node:os"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"

const HERE = dirname(fileURLToPath(import.meta.url))
export const DEFAULT_OUT = resolve(HERE, "..", "examples", "demo-repo")

// Marks a directory this script built, so --out never deletes anything else.
const MARKER = "strata-demo-repo"

// Source text: the raw template with only \` and \${ unescaped, so `\n` inside
// Go and Python strings stays a backslash escape in the generated file.
const src = (strings) => strings.raw[0].replace(/^\n/, "").replace(/\\(`|\$\{)/g, "$1")

const AUTHORS = [
  { name: "Ada Park", email: "ada@harbor.example" },
  { name: "Bo Chen", email: "bo@harbor.example" },
  { name: "Cy Diaz", email: "cy@harbor.example" }
]

// 2024-03-04T09:00:00Z; commit i lands at START + i * 5h13m, so dates are strictly increasing.
const START = Date.UTC(2024, 2, 4, 9, 0, 0)
const STEP_MS = (5 * 60 + 13) * 60 * 1000

const LOGO_V1 = "iVBORw0KGgoAAAANSUhEUgAAABAAAAAQCAIAAACQkWg2AAAALUlEQVR42mP4TyJgoLsGkagFmAinBqyq0fQwEKMaWc+oBtI0kBwP5MQ0TRIfAA+kKlzQP5nqAAAAAElFTkSuQmCC"
const LOGO_V2 = "iVBORw0KGgoAAAANSUhEUgAAABAAAAAQCAIAAACQkWg2AAAAN0lEQVR42mP4TyJgoLuGEwFymAinBqyq0fQwEKMaWc+oBtI0EBsPIlELkBFW1cgK0DUQRCRrAACW6+wOuwi2WQAAAABJRU5ErkJggg=="

// ---------------------------------------------------------------------------------------
// File contents. Later commits change them with exact-text edits (see HISTORY).

const README = src`
# Harbor

Harbor tracks parcels from label to doorstep.
`

const GITIGNORE = src`
node_modules/
dist/
__pycache__/
*.pyc
/bin/
`

const SHIPMENT_TS = src`
// Shipments and the statuses a parcel moves through.

export type ShipmentStatus = "created" | "labelled" | "in_transit" | "delivered" | "returned"

export interface Address {
  readonly name: string
  readonly street: string
  readonly city: string
  readonly postcode: string
  readonly country: string
}

export interface TrackingEvent {
  readonly at: string
  readonly status: ShipmentStatus
  readonly location?: string
}

export interface Shipment {
  readonly id: string
  readonly sender: Address
  readonly recipient: Address
  readonly weightGrams: number
  readonly carrier: string
  readonly status: ShipmentStatus
  readonly createdAt: string
  readonly events: ReadonlyArray<TrackingEvent>
}

const NEXT: Record<ShipmentStatus, ReadonlyArray<ShipmentStatus>> = {
  created: ["labelled"],
  labelled: ["in_transit", "returned"],
  in_transit: ["delivered", "returned"],
  delivered: [],
  returned: []
}

export function canTransition(from: ShipmentStatus, to: ShipmentStatus): boolean {
  return NEXT[from].includes(to)
}

export function isFinal(status: ShipmentStatus): boolean {
  return NEXT[status].length === 0
}
`

const IDS_TS = src`
// Short, sortable identifiers.

let counter = 0

/** prefix, underscore, base-36 milliseconds, two base-36 counter digits. */
export function newId(prefix: string, now: number = Date.now()): string {
  counter = (counter + 1) % 1296
  return \`\${prefix}_\${now.toString(36)}\${counter.toString(36).padStart(2, "0")}\`
}

export function isId(value: string, prefix: string): boolean {
  return value.startsWith(\`\${prefix}_\`) && value.length > prefix.length + 3
}
`

const STORE_TS = src`
// An in-memory shipment store; the API and the tracking service read through it.
import { canTransition, type Shipment, type ShipmentStatus, type TrackingEvent } from "../models/shipment"
import { newId } from "../util/ids"

export type NewShipment = Omit<Shipment, "id" | "status" | "createdAt" | "events">

export class ShipmentStore {
  private readonly shipments = new Map<string, Shipment>()

  create(input: NewShipment, now: Date = new Date()): Shipment {
    const shipment: Shipment = {
      ...input,
      id: newId("shp", now.getTime()),
      status: "created",
      createdAt: now.toISOString(),
      events: []
    }
    this.shipments.set(shipment.id, shipment)
    return shipment
  }

  get(id: string): Shipment | undefined {
    return this.shipments.get(id)
  }

  list(): ReadonlyArray<Shipment> {
    return [...this.shipments.values()].sort((a, b) => a.createdAt.localeCompare(b.createdAt))
  }

  advance(id: string, status: ShipmentStatus, location?: string, now: Date = new Date()): Shipment {
    const current = this.shipments.get(id)
    if (current === undefined) throw new Error(\`No shipment \${id}\`)
    if (!canTransition(current.status, status)) {
      throw new Error(\`Cannot move \${id} from \${current.status} to \${status}\`)
    }
    const at = now.toISOString()
    const event: TrackingEvent = location === undefined ? { at, status } : { at, status, location }
    const next: Shipment = { ...current, status, events: [...current.events, event] }
    this.shipments.set(id, next)
    return next
  }
}
`

const CARRIER_TS = src`
// The carriers Harbor books parcels with, and their tariffs.

export interface Carrier {
  readonly code: string
  readonly name: string
  readonly baseRateCents: number
  readonly perKgCents: number
  readonly maxWeightGrams: number
}

export const CARRIERS: ReadonlyArray<Carrier> = [
  { code: "postal", name: "National Post", baseRateCents: 350, perKgCents: 120, maxWeightGrams: 20_000 },
  { code: "swift", name: "Swift Couriers", baseRateCents: 900, perKgCents: 90, maxWeightGrams: 30_000 },
  { code: "freight", name: "Bulk Freight", baseRateCents: 2500, perKgCents: 40, maxWeightGrams: 500_000 }
]

export function findCarrier(code: string): Carrier | undefined {
  return CARRIERS.find((c) => c.code === code)
}
`

const PRICING_TS = src`
// Prices a shipment with its carrier's tariff.
import { findCarrier, type Carrier } from "../models/carrier"
import type { Shipment } from "../models/shipment"

export interface Quote {
  readonly carrier: string
  readonly cents: number
}

export function priceFor(carrier: Carrier, weightGrams: number): number {
  if (weightGrams > carrier.maxWeightGrams) {
    throw new Error(\`\${carrier.name} does not take parcels over \${carrier.maxWeightGrams} g\`)
  }
  const kg = Math.ceil(weightGrams / 1000)
  return carrier.baseRateCents + kg * carrier.perKgCents
}

export function quote(shipment: Pick<Shipment, "carrier" | "weightGrams">): Quote {
  const carrier = findCarrier(shipment.carrier)
  if (carrier === undefined) throw new Error(\`Unknown carrier \${shipment.carrier}\`)
  return { carrier: carrier.code, cents: priceFor(carrier, shipment.weightGrams) }
}
`

const STATUS_TS = src`
// Summaries of where shipments are, for the API and the dashboard.
import { isFinal, type Shipment, type TrackingEvent } from "../models/shipment"
import type { ShipmentStore } from "../store/shipmentStore"

export interface StatusSummary {
  readonly id: string
  readonly status: string
  readonly done: boolean
  readonly lastSeen?: string
}

export function lastEvent(shipment: Shipment): TrackingEvent | undefined {
  return shipment.events[shipment.events.length - 1]
}

export function summarize(shipment: Shipment): StatusSummary {
  const last = lastEvent(shipment)
  const base = { id: shipment.id, status: shipment.status, done: isFinal(shipment.status) }
  return last?.location === undefined ? base : { ...base, lastSeen: last.location }
}

export function openShipments(store: ShipmentStore): ReadonlyArray<StatusSummary> {
  return store.list().filter((s) => !isFinal(s.status)).map(summarize)
}
`

const VALIDATE_TS = src`
// Request-body validation with messages that name the bad field.
import type { Address } from "../models/shipment"

export class ValidationError extends Error {
  constructor(readonly field: string, message: string) {
    super(\`\${field}: \${message}\`)
  }
}

export type Body = Record<string, unknown>

export function requireString(body: Body, field: string): string {
  const value = body[field]
  if (typeof value !== "string" || value.trim() === "") throw new ValidationError(field, "expected a non-empty string")
  return value.trim()
}

export function requirePositiveInt(body: Body, field: string): number {
  const value = body[field]
  if (typeof value !== "number" || !Number.isInteger(value) || value <= 0) {
    throw new ValidationError(field, "expected a positive integer")
  }
  return value
}

export function parseAddress(value: unknown, field: string): Address {
  if (typeof value !== "object" || value === null) throw new ValidationError(field, "expected an address object")
  const body = value as Body
  return {
    name: requireString(body, "name"),
    street: requireString(body, "street"),
    city: requireString(body, "city"),
    postcode: requireString(body, "postcode"),
    country: requireString(body, "country")
  }
}
`

const ROUTES_TS = src`
// HTTP routes: a table from "METHOD /path" to a handler over the parsed JSON body.
import { quote } from "../services/pricing"
import { openShipments, summarize } from "../services/status"
import type { ShipmentStore } from "../store/shipmentStore"
import { parseAddress, requirePositiveInt, requireString, ValidationError, type Body } from "./validate"

export interface Reply {
  readonly status: number
  readonly body: unknown
}

export type Handler = (body: Body, params: Readonly<Record<string, string>>) => Reply

export function makeRoutes(store: ShipmentStore): Readonly<Record<string, Handler>> {
  return {
    "POST /shipments": (body) => {
      const created = store.create({
        sender: parseAddress(body["sender"], "sender"),
        recipient: parseAddress(body["recipient"], "recipient"),
        weightGrams: requirePositiveInt(body, "weightGrams"),
        carrier: requireString(body, "carrier")
      })
      return { status: 201, body: { shipment: created, quote: quote(created) } }
    },
    "GET /shipments": () => ({ status: 200, body: openShipments(store) }),
    "GET /shipments/:id": (_body, params) => {
      const shipment = store.get(params["id"] ?? "")
      return shipment === undefined ? { status: 404, body: { error: "not found" } } : { status: 200, body: summarize(shipment) }
    },
    "POST /quotes": (body) => ({
      status: 200,
      body: quote({ carrier: requireString(body, "carrier"), weightGrams: requirePositiveInt(body, "weightGrams") })
    })
  }
}

export function toReply(error: unknown): Reply {
  if (error instanceof ValidationError) return { status: 400, body: { error: error.message, field: error.field } }
  return { status: 500, body: { error: "internal error" } }
}
`

const CONFIG_TS = src`
// Server settings from the environment, with defaults for local development.

export interface Config {
  readonly host: string
  readonly port: number
  readonly logRequests: boolean
}

export function loadConfig(env: Readonly<Record<string, string | undefined>> = process.env): Config {
  const port = Number(env["HARBOR_PORT"] ?? "8080")
  if (!Number.isInteger(port) || port <= 0 || port > 65535) throw new Error(\`HARBOR_PORT is not a port: \${env["HARBOR_PORT"]}\`)
  return {
    host: env["HARBOR_HOST"] ?? "127.0.0.1",
    port,
    logRequests: env["HARBOR_LOG"] === "1"
  }
}
`

const SERVER_TS = src`
// The HTTP server: matches a route, parses JSON, replies with JSON.
import { createServer, type Server } from "node:http"
import { makeRoutes, toReply, type Handler } from "./api/routes"
import { loadConfig, type Config } from "./config"
import { ShipmentStore } from "./store/shipmentStore"

export interface Match {
  readonly handler: Handler
  readonly params: Record<string, string>
}

export function match(routes: Readonly<Record<string, Handler>>, method: string, path: string): Match | undefined {
  const parts = path.split("/").filter(Boolean)
  for (const [key, handler] of Object.entries(routes)) {
    const [routeMethod, routePath = ""] = key.split(" ")
    const pattern = routePath.split("/").filter(Boolean)
    if (routeMethod !== method || pattern.length !== parts.length) continue
    const params: Record<string, string> = {}
    const ok = pattern.every((p, i) => {
      const part = parts[i] ?? ""
      if (p.startsWith(":")) params[p.slice(1)] = decodeURIComponent(part)
      return p.startsWith(":") || p === part
    })
    if (ok) return { handler, params }
  }
  return undefined
}

export function startServer(config: Config = loadConfig(), store: ShipmentStore = new ShipmentStore()): Server {
  const routes = makeRoutes(store)
  const server = createServer((req, res) => {
    let raw = ""
    req.on("data", (chunk: Buffer) => (raw += chunk.toString("utf8")))
    req.on("end", () => {
      const found = match(routes, req.method ?? "GET", new URL(req.url ?? "/", "http://x").pathname)
      let reply = { status: 404, body: { error: "no such route" } as unknown }
      if (found !== undefined) {
        try {
          reply = found.handler(raw === "" ? {} : (JSON.parse(raw) as Record<string, unknown>), found.params)
        } catch (error) {
          reply = toReply(error)
        }
      }
      if (config.logRequests) console.log(req.method, req.url, reply.status)
      res.writeHead(reply.status, { "content-type": "application/json" })
      res.end(JSON.stringify(reply.body))
    })
  })
  server.listen(config.port, config.host)
  return server
}
`

const INDEX_TS = src`
// Entry point: start the API with settings from the environment.
import { loadConfig } from "./config"
import { startServer } from "./server"

const config = loadConfig()
startServer(config)
console.log(\`harbor listening on http://\${config.host}:\${config.port}\`)
`

const PACKAGE_JSON = src`
{
  "name": "harbor-api",
  "version": "0.1.0",
  "private": true,
  "type": "module",
  "scripts": {
    "build": "tsc -p tsconfig.json",
    "start": "node dist/index.js"
  },
  "devDependencies": {
    "typescript": "^5.4.0"
  }
}
`

const TSCONFIG_JSON = src`
{
  "compilerOptions": {
    "target": "ES2022",
    "module": "ESNext",
    "moduleResolution": "Bundler",
    "strict": true,
    "outDir": "dist",
    "rootDir": "src"
  },
  "include": ["src"]
}
`

const CSV_TS = src`
// CSV export for the old spreadsheet workflow.
import type { Shipment } from "../models/shipment"

const HEADER = ["id", "carrier", "weight_grams", "status", "created_at"]

function cell(value: string | number): string {
  const text = String(value)
  return /[",\n]/.test(text) ? \`"\${text.replace(/"/g, '""')}"\` : text
}

export function toCsv(shipments: ReadonlyArray<Shipment>): string {
  const rows = shipments.map((s) => [s.id, s.carrier, s.weightGrams, s.status, s.createdAt].map(cell).join(","))
  return [HEADER.join(","), ...rows].join("\n") + "\n"
}
`

const PYPROJECT = src`
[project]
name = "harbor-analytics"
version = "0.1.0"
description = "Delivery analytics over Harbor tracking events"
requires-python = ">=3.10"

[tool.pytest.ini_options]
testpaths = ["tests"]
`

const PY_INIT = src`
"""Delivery analytics for Harbor shipments."""
from .loader import Event, load_events

__all__ = ["Event", "load_events"]
`

const PY_LOADER = src`
"""Read tracking events exported by the Harbor API as JSON lines."""
from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Iterable, Iterator


@dataclass(frozen=True)
class Event:
    shipment_id: str
    status: str
    at: datetime
    location: str | None = None


def parse_event(line: str) -> Event:
    raw = json.loads(line)
    at = datetime.fromisoformat(raw["at"].replace("Z", "+00:00"))
    return Event(shipment_id=raw["id"], status=raw["status"], at=at, location=raw.get("location"))


def iter_events(lines: Iterable[str]) -> Iterator[Event]:
    for line in lines:
        line = line.strip()
        if line:
            yield parse_event(line)


def load_events(path: Path) -> list[Event]:
    with path.open(encoding="utf-8") as handle:
        return sorted(iter_events(handle), key=lambda e: (e.shipment_id, e.at))
`

const PY_METRICS = src`
"""Delivery-time metrics over tracking events."""
from __future__ import annotations

from collections import defaultdict
from datetime import timedelta
from statistics import median

from .loader import Event


def group_by_shipment(events: list[Event]) -> dict[str, list[Event]]:
    groups: dict[str, list[Event]] = defaultdict(list)
    for event in events:
        groups[event.shipment_id].append(event)
    return dict(groups)


def delivery_time(events: list[Event]) -> timedelta | None:
    start = next((e.at for e in events if e.status == "labelled"), None)
    end = next((e.at for e in events if e.status == "delivered"), None)
    if start is None or end is None:
        return None
    return end - start


def delivery_hours(events: list[Event]) -> list[float]:
    hours = []
    for shipment_events in group_by_shipment(events).values():
        took = delivery_time(shipment_events)
        if took is not None:
            hours.append(took.total_seconds() / 3600)
    return sorted(hours)


def median_hours(events: list[Event]) -> float | None:
    hours = delivery_hours(events)
    return median(hours) if hours else None


def return_rate(events: list[Event]) -> float:
    groups = group_by_shipment(events)
    if not groups:
        return 0.0
    returned = sum(1 for evs in groups.values() if any(e.status == "returned" for e in evs))
    return returned / len(groups)
`

const PY_REPORT = src`
"""Render a plain-text delivery report."""
from __future__ import annotations

from .loader import Event
from .metrics import delivery_hours, median_hours, return_rate


def render_report(events: list[Event]) -> str:
    hours = delivery_hours(events)
    lines = ["Harbor delivery report", "======================", f"shipments delivered: {len(hours)}"]
    middle = median_hours(events)
    lines.append(f"median hours to deliver: {middle:.1f}" if middle is not None else "median hours to deliver: n/a")
    lines.append(f"return rate: {return_rate(events):.1%}")
    return "\n".join(lines) + "\n"
`

const PY_CLI = src`
"""Command line: python -m analytics.cli events.jsonl"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from analytics.loader import load_events
from analytics.report import render_report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Summarise Harbor tracking events.")
    parser.add_argument("events", type=Path, help="JSON lines exported by the API")
    args = parser.parse_args(argv)
    sys.stdout.write(render_report(load_events(args.events)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
`

const PY_TEST = src`
from datetime import datetime, timezone

from analytics.loader import Event
from analytics.metrics import delivery_hours, return_rate


def at(hour: int) -> datetime:
    return datetime(2024, 3, 1, hour, tzinfo=timezone.utc)


def test_delivery_hours_counts_labelled_to_delivered():
    events = [Event("a", "labelled", at(1)), Event("a", "delivered", at(7)), Event("b", "labelled", at(2))]
    assert delivery_hours(events) == [6.0]


def test_return_rate_is_a_share_of_shipments():
    events = [Event("a", "returned", at(1)), Event("b", "delivered", at(2))]
    assert return_rate(events) == 0.5
`

const GO_MOD = src`
module example.com/harbor

go 1.22
`

const GO_QUEUE = src`
// Package queue is a small in-memory job queue with retries.
package queue

import (
	"errors"
	"sync"
)

// Job is one unit of work for the worker.
type Job struct {
	ID       string
	Kind     string
	Payload  map[string]string
	Attempts int
}

// ErrEmpty is returned by Pop when no job is waiting.
var ErrEmpty = errors.New("queue: empty")

// Queue holds jobs in FIFO order; safe for concurrent use.
type Queue struct {
	mu   sync.Mutex
	jobs []Job
}

// New makes an empty queue.
func New() *Queue {
	return &Queue{}
}

// Push appends a job.
func (q *Queue) Push(job Job) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.jobs = append(q.jobs, job)
}

// Pop removes and returns the oldest job.
func (q *Queue) Pop() (Job, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.jobs) == 0 {
		return Job{}, ErrEmpty
	}
	job := q.jobs[0]
	q.jobs = q.jobs[1:]
	return job, nil
}

// Len reports how many jobs are waiting.
func (q *Queue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.jobs)
}
`

const GO_RETRY = src`
package queue

import "time"

// Policy says how many attempts a job gets and how long to wait between them.
type Policy struct {
	MaxAttempts int
	Base        time.Duration
	Max         time.Duration
}

// DefaultPolicy retries five times, doubling from 200ms up to 10s.
var DefaultPolicy = Policy{MaxAttempts: 5, Base: 200 * time.Millisecond, Max: 10 * time.Second}

// Delay is the wait before attempt n (1-based).
func (p Policy) Delay(attempt int) time.Duration {
	d := p.Base
	for i := 1; i < attempt; i++ {
		d *= 2
		if d >= p.Max {
			return p.Max
		}
	}
	return d
}

// Retry re-queues a failed job unless it has used up its attempts.
func Retry(q *Queue, job Job, p Policy) bool {
	job.Attempts++
	if job.Attempts >= p.MaxAttempts {
		return false
	}
	q.Push(job)
	return true
}
`

const GO_LABELS = src`
// Package jobs holds the handlers the worker runs, one per job kind.
package jobs

import (
	"fmt"
	"strings"

	"example.com/harbor/worker/queue"
)

// Label is a printable shipping label.
type Label struct {
	ShipmentID string
	Carrier    string
	Lines      []string
}

// BuildLabel renders the label for a "label" job.
func BuildLabel(job queue.Job) (Label, error) {
	id, ok := job.Payload["shipment"]
	if !ok {
		return Label{}, fmt.Errorf("job %s: no shipment in payload", job.ID)
	}
	carrier := job.Payload["carrier"]
	lines := []string{
		strings.ToUpper(carrier),
		job.Payload["name"],
		job.Payload["street"],
		job.Payload["postcode"] + " " + job.Payload["city"],
		"REF " + id,
	}
	return Label{ShipmentID: id, Carrier: carrier, Lines: lines}, nil
}

// HandleLabel builds and prints a label.
func HandleLabel(job queue.Job) error {
	label, err := BuildLabel(job)
	if err != nil {
		return err
	}
	fmt.Println(strings.Join(label.Lines, "\n"))
	return nil
}
`

const GO_MAIN = src`
// Command worker drains the job queue, retrying failed jobs with backoff.
package main

import (
	"log"
	"time"

	"example.com/harbor/worker/jobs"
	"example.com/harbor/worker/queue"
)

var handlers = map[string]func(queue.Job) error{
	"label": jobs.HandleLabel,
}

// run processes jobs until the queue is empty and returns how many failed for good.
func run(q *queue.Queue, policy queue.Policy) int {
	failed := 0
	for {
		job, err := q.Pop()
		if err == queue.ErrEmpty {
			return failed
		}
		handle, ok := handlers[job.Kind]
		if !ok {
			log.Printf("job %s: unknown kind %q", job.ID, job.Kind)
			failed++
			continue
		}
		if err := handle(job); err != nil {
			log.Printf("job %s: %v", job.ID, err)
			if !queue.Retry(q, job, policy) {
				failed++
			}
			time.Sleep(policy.Delay(job.Attempts + 1))
		}
	}
}

func main() {
	q := queue.New()
	q.Push(queue.Job{ID: "j1", Kind: "label", Payload: map[string]string{"shipment": "shp_demo", "carrier": "postal", "name": "R. Lee", "street": "1 Quay St", "postcode": "1010", "city": "Port"}})
	if failed := run(q, queue.DefaultPolicy); failed > 0 {
		log.Fatalf("%d jobs failed", failed)
	}
}
`

const GO_NOTIFY = src`
package jobs

import (
	"fmt"

	"example.com/harbor/worker/queue"
)

// Message is a delivery notification for a recipient.
type Message struct {
	To   string
	Body string
}

// BuildMessage turns a "notify" job into the message to send.
func BuildMessage(job queue.Job) (Message, error) {
	to := job.Payload["email"]
	if to == "" {
		return Message{}, fmt.Errorf("job %s: no email in payload", job.ID)
	}
	body := fmt.Sprintf("Your parcel %s is now %s.", job.Payload["shipment"], job.Payload["status"])
	return Message{To: to, Body: body}, nil
}

// HandleNotify sends (here: prints) a notification.
func HandleNotify(job queue.Job) error {
	msg, err := BuildMessage(job)
	if err != nil {
		return err
	}
	fmt.Printf("to %s: %s\n", msg.To, msg.Body)
	return nil
}
`

const ARCHITECTURE_MD = src`
# Architecture

Harbor has three parts that share one event format (JSON lines: \`id\`, \`status\`, \`at\`, \`location\`).

- \`src/\` (TypeScript): the HTTP API. \`api/routes.ts\` maps requests to the store
  (\`store/shipmentStore.ts\`) and the services (\`services/pricing.ts\`, \`services/status.ts\`).
- \`analytics/\` (Python): reads exported events and reports delivery times and return rates.
- \`worker/\` (Go): drains the job queue (labels to print), retrying with backoff.
`

const TODO_MD = src`
# Scratch notes

- CSV export is still used by the finance spreadsheet; remove once they switch to the API.
- Label printer times out on parcels over 30 kg; check with the freight carrier.
`

// ---------------------------------------------------------------------------------------
// The history. Each entry is one commit (or a branch switch / merge). `write` sets whole
// files, `edit` replaces one exact text (which must occur), `rename` is `git mv`,
// `remove` is `git rm`, `binary` writes base64 bytes.

/** @type {ReadonlyArray<Step>} */
const HISTORY = [
  { by: 0, msg: "Initial commit", write: { "README.md": README, ".gitignore": GITIGNORE } },
  { by: 0, msg: "Add shipment model and status transitions", write: { "src/models/shipment.ts": SHIPMENT_TS } },
  { by: 1, msg: "Add sortable id helper", write: { "src/util/ids.ts": IDS_TS } },
  { by: 0, msg: "Add in-memory shipment store", write: { "src/store/shipmentStore.ts": STORE_TS } },
  { by: 1, msg: "Add carrier tariffs", write: { "src/models/carrier.ts": CARRIER_TS } },
  { by: 1, msg: "Add pricing service", write: { "src/services/pricing.ts": PRICING_TS } },
  { by: 0, msg: "Add status summaries", write: { "src/services/status.ts": STATUS_TS } },
  { by: 2, msg: "Add request validation", write: { "src/api/validate.ts": VALIDATE_TS } },
  { by: 2, msg: "Add HTTP routes", write: { "src/api/routes.ts": ROUTES_TS } },
  {
    by: 0,
    msg: "Add server, config and entry point",
    write: { "src/config.ts": CONFIG_TS, "src/server.ts": SERVER_TS, "src/index.ts": INDEX_TS, "package.json": PACKAGE_JSON, "tsconfig.json": TSCONFIG_JSON }
  },
  { by: 1, msg: "Add CSV export for the finance spreadsheet", write: { "src/legacy/csvExport.ts": CSV_TS } },
  {
    by: 2,
    msg: "analytics: load tracking events from JSON lines",
    write: { "pyproject.toml": PYPROJECT, "analytics/__init__.py": PY_INIT, "analytics/loader.py": PY_LOADER }
  },
  { by: 2, msg: "analytics: delivery-time metrics", write: { "analytics/metrics.py": PY_METRICS } },
  { by: 1, msg: "analytics: plain-text report", write: { "analytics/report.py": PY_REPORT } },
  { by: 2, msg: "analytics: command line entry point", write: { "analytics/cli.py": PY_CLI } },
  { by: 1, msg: "analytics: tests for metrics", write: { "tests/test_metrics.py": PY_TEST } },
  { by: 0, msg: "worker: job queue", write: { "go.mod": GO_MOD, "worker/queue/queue.go": GO_QUEUE } },
  { by: 0, msg: "worker: retry policy with exponential backoff", write: { "worker/queue/retry.go": GO_RETRY } },
  { by: 2, msg: "worker: label job handler", write: { "worker/jobs/labels.go": GO_LABELS } },
  { by: 0, msg: "worker: main loop", write: { "worker/main.go": GO_MAIN } },
  { by: 1, msg: "Add logo", binary: { "assets/logo.png": LOGO_V1 } },
  {
    by: 0,
    msg: "Rename status service to tracking",
    rename: [["src/services/status.ts", "src/services/tracking.ts"]],
    edit: [["src/api/routes.ts", 'from "../services/status"', 'from "../services/tracking"']]
  },
  {
    by: 1,
    msg: "pricing: weekend surcharge",
    edit: [
      ["src/services/pricing.ts", "export function quote(shipment: Pick<Shipment, \"carrier\" | \"weightGrams\">): Quote {", "/** Parcels booked on Saturday or Sunday cost this much more. */\nexport const WEEKEND_SURCHARGE = 1.15\n\nexport function quote(shipment: Pick<Shipment, \"carrier\" | \"weightGrams\">, day: Date = new Date()): Quote {"],
      ["src/services/pricing.ts", "  return { carrier: carrier.code, cents: priceFor(carrier, shipment.weightGrams) }", "  const base = priceFor(carrier, shipment.weightGrams)\n  const weekend = day.getUTCDay() === 0 || day.getUTCDay() === 6\n  return { carrier: carrier.code, cents: weekend ? Math.round(base * WEEKEND_SURCHARGE) : base }"]
    ]
  },
  { by: 2, msg: "docs: architecture overview", write: { "docs/architecture.md": ARCHITECTURE_MD } },
  { by: 1, msg: "Add scratch notes", write: { "notes/todo.md": TODO_MD } },
  { by: 0, msg: "docs: tracking service was renamed", edit: [["docs/architecture.md", "`services/status.ts`", "`services/tracking.ts`"]] },
  { branch: "feature/notify" },
  { by: 2, msg: "worker: notification job handler", write: { "worker/jobs/notify.go": GO_NOTIFY } },
  { by: 2, msg: "worker: route notify jobs", edit: [["worker/main.go", "\t\"label\": jobs.HandleLabel,\n", "\t\"label\":  jobs.HandleLabel,\n\t\"notify\": jobs.HandleNotify,\n"]] },
  { checkout: "main" },
  {
    by: 1,
    msg: "analytics: p95 delivery time",
    edit: [
      ["analytics/metrics.py", "def return_rate(", "def percentile_hours(events: list[Event], pct: float) -> float | None:\n    hours = delivery_hours(events)\n    if not hours:\n        return None\n    index = min(len(hours) - 1, round(pct / 100 * (len(hours) - 1)))\n    return hours[index]\n\n\ndef return_rate("],
      ["analytics/report.py", "from .metrics import delivery_hours, median_hours, return_rate", "from .metrics import delivery_hours, median_hours, percentile_hours, return_rate"],
      ["analytics/report.py", "    lines.append(f\"return rate:", "    p95 = percentile_hours(events, 95)\n    lines.append(f\"p95 hours to deliver: {p95:.1f}\" if p95 is not None else \"p95 hours to deliver: n/a\")\n    lines.append(f\"return rate:"]
    ]
  },
  { merge: "feature/notify", by: 0, msg: "Merge branch 'feature/notify'" },
  { by: 0, msg: "worker: rename retry.go to backoff.go", rename: [["worker/queue/retry.go", "worker/queue/backoff.go"]] },
  {
    by: 2,
    msg: "store: list shipments by status",
    edit: [
      ["src/store/shipmentStore.ts", "  advance(id: string,", "  listByStatus(status: ShipmentStatus): ReadonlyArray<Shipment> {\n    return this.list().filter((s) => s.status === status)\n  }\n\n  advance(id: string,"],
      ["src/api/routes.ts", "    \"GET /shipments/:id\":", "    \"GET /shipments/status/:status\": (_body, params) => ({\n      status: 200,\n      body: store.listByStatus((params[\"status\"] ?? \"created\") as ShipmentStatus).map(summarize)\n    }),\n    \"GET /shipments/:id\":"],
      ["src/api/routes.ts", "import { quote } from \"../services/pricing\"", "import type { ShipmentStatus } from \"../models/shipment\"\nimport { quote } from \"../services/pricing\""]
    ]
  },
  { by: 1, msg: "Refresh logo colours", binary: { "assets/logo.png": LOGO_V2 } },
  { by: 1, msg: "Remove CSV export; finance reads the API now", remove: ["src/legacy/csvExport.ts"] },
  { by: 0, msg: "Remove scratch notes", remove: ["notes/todo.md"] },
  {
    by: 1,
    msg: "pricing: cheapest quote across carriers",
    edit: [
      ["src/services/pricing.ts", "import { findCarrier, type Carrier } from \"../models/carrier\"", "import { CARRIERS, findCarrier, type Carrier } from \"../models/carrier\""],
      ["src/services/pricing.ts", "export function priceFor(", "export function cheapestQuote(weightGrams: number): Quote | undefined {\n  const options = CARRIERS.filter((c) => weightGrams <= c.maxWeightGrams)\n    .map((c) => ({ carrier: c.code, cents: priceFor(c, weightGrams) }))\n    .sort((a, b) => a.cents - b.cents)\n  return options[0]\n}\n\nexport function priceFor("]
    ]
  },
  { by: 2, msg: "routes: quote the cheapest carrier when none is given", edit: [["src/api/routes.ts", "import { quote } from \"../services/pricing\"", "import { cheapestQuote, quote } from \"../services/pricing\""], ["src/api/routes.ts", "    \"POST /quotes\": (body) => ({", "    \"POST /quotes/cheapest\": (body) => ({ status: 200, body: cheapestQuote(requirePositiveInt(body, \"weightGrams\")) ?? null }),\n    \"POST /quotes\": (body) => ({"]] },
  {
    by: 0,
    msg: "README: layout and how to run each part",
    edit: [["README.md", "Harbor tracks parcels from label to doorstep.\n", "Harbor tracks parcels from label to doorstep.\n\n## Layout\n\n- `src/`: the HTTP API (TypeScript). `npm run build && npm start`.\n- `analytics/`: delivery reports (Python). `python -m analytics.cli events.jsonl`.\n- `worker/`: the label and notification worker (Go). `go run ./worker`.\n\nSee `docs/architecture.md`.\n"]]
  },
  { by: 1, msg: "Release 0.2.0", edit: [["package.json", "\"version\": \"0.1.0\"", "\"version\": \"0.2.0\""], ["pyproject.toml", "version = \"0.1.0\"", "version = \"0.2.0\""]] }
]

/**
 * @typedef {{ by?: number, msg?: string, write?: Record<string, string>, edit?: Array<[string, string, string]>,
 *   rename?: Array<[string, string]>, remove?: Array<string>, binary?: Record<string, string>,
 *   branch?: string, checkout?: string, merge?: string }} Step
 */

const isCommit = (step) => step.msg !== undefined

/** How many commits the history makes (merge included). */
export const COMMIT_COUNT = HISTORY.filter(isCommit).length

const gitAvailable = () => {
  try {
    execFileSync("git", ["--version"], { stdio: "ignore" })
    return true
  } catch {
    return false
  }
}

const dateOf = (i) => new Date(START + i * STEP_MS).toISOString().replace(".000Z", "+00:00")

// Delete a file and the directories it leaves empty, as `git rm` does.
function removeFile(out, path) {
  rmSync(join(out, path))
  for (let dir = dirname(path); dir !== "." && readdirSync(join(out, dir)).length === 0; dir = dirname(dir)) {
    rmSync(join(out, dir), { recursive: true })
  }
}

function applyFiles(out, step, git) {
  for (const [from, to] of step.rename ?? []) {
    mkdirSync(dirname(join(out, to)), { recursive: true })
    if (git) git(["mv", from, to])
    else renameSync(join(out, from), join(out, to))
  }
  for (const [path, content] of Object.entries(step.write ?? {})) {
    mkdirSync(dirname(join(out, path)), { recursive: true })
    writeFileSync(join(out, path), content)
  }
  for (const [path, base64] of Object.entries(step.binary ?? {})) {
    mkdirSync(dirname(join(out, path)), { recursive: true })
    writeFileSync(join(out, path), Buffer.from(base64, "base64"))
  }
  for (const [path, from, to] of step.edit ?? []) {
    const text = readFileSync(join(out, path), "utf8")
    if (!text.includes(from)) throw new Error(`make-demo-repo: "${step.msg}": ${path} does not contain ${JSON.stringify(from)}`)
    writeFileSync(join(out, path), text.replace(from, to))
  }
  for (const path of step.remove ?? []) {
    if (git) git(["rm", "-q", path])
    else removeFile(out, path)
  }
}

function prepareOut(out, replace) {
  if (!existsSync(out)) return mkdirSync(out, { recursive: true })
  const entries = readdirSync(out)
  if (entries.length === 0) return
  const ours = existsSync(join(out, ".git", MARKER)) || existsSync(join(out, `.${MARKER}`))
  if (!ours || !replace) {
    throw new Error(`make-demo-repo: ${out} exists and is not empty${ours ? " (pass --force or replace: true to rebuild it)" : " and was not built by this script; choose another --out"}`)
  }
  rmSync(out, { recursive: true, force: true })
  mkdirSync(out, { recursive: true })
}

/**
 * Build the example repository at `out`.
 * @param {{ out?: string, git?: boolean | "auto", replace?: boolean }} [options]
 *   `git: false` (or no git on PATH with "auto") writes the final tree only.
 * @returns {{ out: string, git: boolean, commits: number, head: string | null }}
 */
export function makeDemoRepo(options = {}) {
  const out = resolve(options.out ?? DEFAULT_OUT)
  const useGit = options.git === undefined || options.git === "auto" ? gitAvailable() : options.git
  prepareOut(out, options.replace ?? false)
  if (!useGit) return buildDemoRepo(out, false)
  // The history takes about 110 git processes (~1.8 s of CPU); the tests ask for it ~25
  // times. It is built once per version of this script under the repository's .cache/
  // (ignored by git) and copied, file times kept so git's index stays fresh: the copy has
  // the same objects, refs and HEAD. A template is renamed into place only when complete,
  // so concurrent processes never copy a half-built one.
  const template = demoTemplate()
  cpSync(template.out, out, { recursive: true, preserveTimestamps: true })
  return { ...template, out }
}

/** The built template for this version of the script: read back, or built and renamed into place. */
function demoTemplate() {
  if (templateMemo !== undefined) return templateMemo
  const version = createHash("sha256").update(readFileSync(fileURLToPath(import.meta.url))).digest("hex").slice(0, 16)
  const dir = join(HERE, "..", ".cache", `demo-repo-${version}`)
  if (!existsSync(join(dir, ".git", MARKER))) {
    const building = `${dir}.building-${process.pid}-${Math.random().toString(36).slice(2)}`
    mkdirSync(building, { recursive: true })
    try {
      buildDemoRepo(building, true)
      renameSync(building, dir)
    } catch (e) {
      rmSync(building, { recursive: true, force: true })
      // Another process renamed its template into place first: use that one.
      if (!existsSync(join(dir, ".git", MARKER))) throw e
    }
  }
  const head = execFileSync("git", ["rev-parse", "HEAD"], { cwd: dir, env: { PATH: process.env.PATH ?? "", GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: devNull } }).toString("utf8").trim()
  templateMemo = { out: dir, git: true, commits: COMMIT_COUNT, head }
  return templateMemo
}

/** This process's template (see demoTemplate). */
let templateMemo

/** Write the repository into the empty folder `out`, with its git history when `useGit`. */
function buildDemoRepo(out, useGit) {
  let git
  if (useGit) {
    // Nothing from the user's or system's git config may leak into the hashes.
    const baseEnv = {
      PATH: process.env.PATH ?? "",
      HOME: out,
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_CONFIG_GLOBAL: devNull,
      LC_ALL: "C",
      TZ: "UTC"
    }
    let env = baseEnv
    git = (args) =>
      execFileSync("git", ["-c", "core.autocrlf=false", "-c", "commit.gpgsign=false", "-c", "core.fileMode=false", ...args], {
        cwd: out,
        env,
        stdio: ["ignore", "pipe", "pipe"]
      }).toString("utf8")
    git(["init", "-q"])
    git(["symbolic-ref", "HEAD", "refs/heads/main"])
    writeFileSync(join(out, ".git", MARKER), "Built by scripts/make-demo-repo.mjs; safe to delete.\n")
    let n = 0
    for (const step of HISTORY) {
      if (step.branch !== undefined) {
        git(["checkout", "-q", "-b", step.branch])
        continue
      }
      if (step.checkout !== undefined) {
        git(["checkout", "-q", step.checkout])
        continue
      }
      const who = AUTHORS[step.by ?? 0]
      const date = dateOf(n++)
      env = {
        ...baseEnv,
        GIT_AUTHOR_NAME: who.name,
        GIT_AUTHOR_EMAIL: who.email,
        GIT_AUTHOR_DATE: date,
        GIT_COMMITTER_NAME: who.name,
        GIT_COMMITTER_EMAIL: who.email,
        GIT_COMMITTER_DATE: date
      }
      if (step.merge !== undefined) {
        git(["merge", "-q", "--no-ff", "--no-edit", "-m", step.msg, step.merge])
        continue
      }
      applyFiles(out, step, git)
      git(["add", "-A"])
      git(["commit", "-q", "-m", step.msg])
    }
    git(["branch", "-q", "-D", "feature/notify"])
    const head = git(["rev-parse", "HEAD"]).trim()
    return { out, git: true, commits: COMMIT_COUNT, head }
  }

  // Without git: replay the same file operations (the branch touches files main does not,
  // so applying its commits in order gives the merged tree).
  writeFileSync(join(out, `.${MARKER}`), "Built by scripts/make-demo-repo.mjs without git; safe to delete.\n")
  for (const step of HISTORY) if (step.merge === undefined && isCommit(step)) applyFiles(out, step, undefined)
  return { out, git: false, commits: 0, head: null }
}

const isMain = process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)
if (isMain) {
  const args = process.argv.slice(2)
  const outAt = args.indexOf("--out")
  const out = outAt >= 0 ? args[outAt + 1] : DEFAULT_OUT
  if (out === undefined) {
    console.error("make-demo-repo: --out needs a directory")
    process.exit(2)
  }
  try {
    const result = makeDemoRepo({
      out,
      git: args.includes("--no-git") ? false : "auto",
      replace: out === DEFAULT_OUT || args.includes("--force")
    })
    console.log(
      result.git
        ? `Built ${result.out} (${result.commits} commits, HEAD ${result.head.slice(0, 12)})`
        : `Built ${result.out} (final tree only${args.includes("--no-git") ? "" : "; git was not found"})`
    )
  } catch (error) {
    console.error(error instanceof Error ? error.message : String(error))
    process.exit(1)
  }
}
