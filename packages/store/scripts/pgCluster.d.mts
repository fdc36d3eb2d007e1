export interface Cluster {
  readonly url: string
  readonly port: number
  readonly dataDir: string
  readonly restart: (mode?: "immediate" | "fast") => void
  readonly stop: () => void
}
export declare const findPgBin: () => string | undefined
export declare const startCluster: () => Promise<Cluster>
