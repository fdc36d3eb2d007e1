/**
 * Charts over uPlot, shared by the dashboard and the replay page: stacked bars (a request's
 * tokens by billing or by content) and lines (cumulative cost), with a legend in HTML
 * (readable by a screen reader) and the canvas labelled for assistive technology.
 */
import { useLayoutEffect, useRef } from "preact/hooks"
import uPlot from "uplot"

export interface Band {
  readonly label: string
  readonly color: string
  readonly values: ReadonlyArray<number>
}

/** Tick steps for request and turn numbers: whole numbers only. */
const INTEGER_STEPS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000]

/** A chart's width from its container's observed content width (hidden or unlaid-out: 800). */
const chartWidth = (observed: number): number => Math.max(320, Math.floor(observed || 800))

/**
 * A uPlot chart that follows its container's width and is rebuilt when its data change.
 * It is created from the container's first resize observation, which the browser delivers
 * after its own layout of the frame: reading the width eagerly would force a layout of the
 * whole page per chart, and the observer's first report would then draw each chart twice.
 */
const useChart = (make: (el: HTMLElement, width: number) => uPlot, deps: ReadonlyArray<unknown>) => {
  const ref = useRef<HTMLDivElement>(null)
  useLayoutEffect(() => {
    const el = ref.current
    if (el === null) return
    let chart: uPlot | undefined
    const observer = new ResizeObserver((entries) => {
      const width = chartWidth(entries.at(-1)?.contentRect.width ?? 0)
      if (chart === undefined) chart = make(el, width)
      else if (width !== chart.width) chart.setSize({ width, height: chart.height })
    })
    observer.observe(el)
    return () => {
      observer.disconnect()
      chart?.destroy()
    }
  }, deps)
  return ref
}

const Legend = ({ bands }: { readonly bands: ReadonlyArray<{ readonly label: string; readonly color: string }> }) => (
  <ul class="legend">
    {bands.map((b) => (
      <li key={b.label}>
        <span class="swatch" style={{ background: b.color }} aria-hidden="true" />
        {b.label}
      </li>
    ))}
  </ul>
)

/** The smallest gap between consecutive x values (1 for a single value): a bar's slot. */
const slotOf = (x: ReadonlyArray<number>): number => {
  let slot = Infinity
  for (let i = 1; i < x.length; i++) slot = Math.min(slot, (x[i] ?? 0) - (x[i - 1] ?? 0))
  return Number.isFinite(slot) && slot > 0 ? slot : 1
}

/**
 * Draws stacked bars on the plot's canvas: per band one fill color and one pixel-aligned
 * `fillRect` per bar, each band's own slice only. uPlot's bar paths fill one anti-aliased
 * path per band over the whole stack; at 250 bars that rasterization cost the page more
 * than everything else in its first frame.
 */
const drawStacks = (u: uPlot, stacks: ReadonlyArray<ReadonlyArray<number>>, colors: ReadonlyArray<string>, slot: number): void => {
  const xs = u.data[0]
  const { ctx, bbox } = u
  const unit = bbox.width / Math.max(1e-9, (u.scales["x"]?.max ?? 1) - (u.scales["x"]?.min ?? 0))
  const barWidth = Math.max(1, Math.round(Math.min(40 * devicePixelRatio, 0.85 * slot * unit)))
  ctx.save()
  ctx.beginPath()
  ctx.rect(bbox.left, bbox.top, bbox.width, bbox.height)
  ctx.clip()
  const base = xs.map(() => Math.round(u.valToPos(0, "y", true)))
  stacks.forEach((stack, b) => {
    ctx.fillStyle = colors[b] ?? "#000"
    xs.forEach((xv, i) => {
      const top = Math.round(u.valToPos(stack[i] ?? 0, "y", true))
      const bottom = base[i] ?? top
      if (bottom > top) ctx.fillRect(Math.round(u.valToPos(xv, "x", true) - barWidth / 2), top, barWidth, bottom - top)
      base[i] = top
    })
  })
  ctx.restore()
}

/**
 * Stacked bars: one bar per x, bands stacked bottom to top in the order given. The series
 * hold cumulative sums (so the y scale and the cursor see the stack's height); the bars
 * are drawn by `drawStacks`.
 */
export const StackedBars = (props: {
  readonly title: string
  readonly x: ReadonlyArray<number>
  readonly bands: ReadonlyArray<Band>
  readonly yLabel: string
  readonly height?: number
  readonly onPick?: (index: number) => void
  /** Names for the x values (categories such as strategies) instead of numbers. */
  readonly xNames?: ReadonlyArray<string>
  readonly xLabel?: string
}) => {
  const { x, bands } = props
  const ref = useChart((el, w) => {
    const sums: Array<ReadonlyArray<number>> = []
    let running: ReadonlyArray<number> = x.map(() => 0)
    for (const band of bands) {
      const below = running
      running = below.map((v, i) => v + (band.values[i] ?? 0))
      sums.push(running)
    }
    const slot = slotOf(x)
    const chart = new uPlot(
      {
        width: w,
        height: props.height ?? 220,
        legend: { show: false },
        cursor: { drag: { x: false, y: false }, points: { show: false } },
        scales: { x: { time: false, range: (_u, min, max) => [min - slot / 2, max + slot / 2] } },
        axes: [
          props.xNames === undefined
            ? { label: props.xLabel ?? "request", incrs: INTEGER_STEPS }
            : { label: props.xLabel ?? "", incrs: [1], values: (_u: uPlot, splits: Array<number>) => splits.map((v) => props.xNames?.[v] ?? ""), rotate: 35, size: 100 },
          { label: props.yLabel, size: 70 }
        ],
        series: [{}, ...bands.map((b) => ({ label: b.label, stroke: b.color, width: 0, paths: () => null, points: { show: false } }))],
        hooks: { draw: [(u: uPlot) => drawStacks(u, sums, bands.map((b) => b.color), slot)] }
      },
      [x.slice(), ...sums.map((s) => s.slice())],
      el
    )
    if (props.onPick !== undefined) {
      const pick = props.onPick
      chart.over.addEventListener("click", () => {
        const idx = chart.cursor.idx
        if (idx !== null && idx !== undefined) pick(idx)
      })
    }
    return chart
  }, [x, bands])
  return (
    <figure class="chart">
      <figcaption>{props.title}</figcaption>
      <div ref={ref} role="img" aria-label={`${props.title}: ${bands.map((b) => b.label).join(", ")} per request; the table below lists the figures`} />
      <Legend bands={bands} />
    </figure>
  )
}

/** Lines over x, optionally on a log scale (so a 4% gap between two large totals shows). */
export const Lines = (props: {
  readonly title: string
  readonly x: ReadonlyArray<number>
  readonly xLabel: string
  readonly lines: ReadonlyArray<Band>
  readonly yLabel: string
  readonly log?: boolean
  readonly height?: number
}) => {
  const { x, lines } = props
  const ref = useChart((el, w) =>
    new uPlot(
      {
        width: w,
        height: props.height ?? 240,
        legend: { show: false },
        scales: { x: { time: false }, y: props.log === true ? { distr: 3 } : {} },
        axes: [{ label: props.xLabel, incrs: INTEGER_STEPS }, { label: props.yLabel, size: 80 }],
        series: [{}, ...lines.map((l) => ({ label: l.label, stroke: l.color, width: 2, points: { show: x.length < 60 } }))]
      },
      [x.slice(), ...lines.map((l) => (props.log === true ? l.values.map((v) => (v > 0 ? v : null)) : l.values.slice()))] as uPlot.AlignedData,
      el
    ), [x, lines, props.log])
  return (
    <figure class="chart">
      <figcaption>{props.title}</figcaption>
      <div ref={ref} role="img" aria-label={`${props.title}: ${lines.map((l) => l.label).join(", ")}; the table lists the figures`} />
      <Legend bands={lines} />
    </figure>
  )
}
