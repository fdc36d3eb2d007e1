/**
 * Every `strata` subcommand, in the order `strata --help` lists them. A new command
 * (such as `replay`) is added here and nowhere else.
 */
import { config } from "./config.ts"
import { init } from "./init.ts"

export const COMMANDS = [init, config] as const
