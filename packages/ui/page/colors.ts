/** The palette: one color per billing class and per kind of content, with enough contrast on white. */
export const BILLING = [
  { key: "read", label: "cache read", color: "#2f855a" },
  { key: "write5m", label: "5m write", color: "#d69e2e" },
  { key: "write1h", label: "1h write", color: "#c05621" },
  { key: "uncached", label: "uncached", color: "#c53030" }
] as const

export const CONTENT = [
  { key: "system", label: "system", color: "#4a5568" },
  { key: "tools", label: "tools", color: "#805ad5" },
  { key: "map", label: "map", color: "#3182ce" },
  { key: "files", label: "files", color: "#319795" },
  { key: "history", label: "history", color: "#dd6b20" },
  { key: "prompt", label: "prompt", color: "#d53f8c" },
  { key: "other", label: "other", color: "#a0aec0" }
] as const

/** Colors for strategies of a replay, in order. */
export const SERIES = ["#2b6cb0", "#c53030", "#2f855a", "#d69e2e", "#6b46c1", "#dd6b20", "#319795", "#b83280", "#4a5568", "#718096"]
