/**
 * Charts over uPlot, shared by the dashboard and the replay page: stacked bars (a request's
 * tokens by billing or by content) and lines (cumulative cost), with a legend in HTML
 * (readable by a screen reader) and the canvas labelled for assistive technology.
 */
import { useEffect, useRef } from "preact/hooks"
import uPlot from "uplot"

export interface Band {
  readonly label: string
  readonly color: string
  readonly values: ReadonlyArray<number>
}

/** Tick steps for request and turn numbers: whole numbers only. */
const INTEGER_STEPS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000]

const width = (el: HTMLElement): number => Math.max(320, Math.floor(el.getBoundingClientRect().width || 800))

/** A uPlot chart that follows its container's width and is rebuilt when its data change. */
const useChart = (make: (el: HTMLElement) => uPlot, deps: ReadonlyArray<unknown>) => {
  const ref = useRef<HTMLDivElement>(null)
  useEffect(() => {
    const el = ref.current
    if (el === null) return
    const chart = make(el)
    const observer = new ResizeObserver(() => chart.setSize({ width: width(el), height: chart.height }))
    observer.observe(el)
    return () => {
      observer.disconnect()
      chart.destroy()
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

/**
 * Stacked bars: one bar per x, bands stacked bottom to top in the order given. Drawn as
 * cumulative sums, tallest first, so each band shows as the slice above the one below.
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
  const ref = useChart((el) => {
    const sums: Array<Array<number>> = []
    let running = x.map(() => 0)
    for (const band of bands) {
      running = running.map((v, i) => v + (band.values[i] ?? 0))
      sums.push(running)
    }
    const order = bands.map((_, i) => bands.length - 1 - i)
    const bars = uPlot.paths.bars?.({ size: [0.85, 40], align: 0 })
    const chart = new uPlot(
      {
        width: width(el),
        height: props.height ?? 220,
        legend: { show: false },
        cursor: { drag: { x: false, y: false } },
        scales: { x: { time: false } },
        axes: [
          props.xNames === undefined
            ? { label: props.xLabel ?? "request", incrs: INTEGER_STEPS }
            : { label: props.xLabel ?? "", incrs: [1], values: (_u: uPlot, splits: Array<number>) => splits.map((v) => props.xNames?.[v] ?? ""), rotate: 35, size: 100 },
          { label: props.yLabel, size: 70 }
        ],
        series: [{}, ...order.map((i) => ({ label: bands[i]?.label ?? "", fill: bands[i]?.color ?? "#000", stroke: bands[i]?.color ?? "#000", width: 0, ...(bars === undefined ? {} : { paths: bars }), points: { show: false } }))]
      },
      [x.slice(), ...order.map((i) => sums[i] ?? [])],
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
  const ref = useChart((el) =>
    new uPlot(
      {
        width: width(el),
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
