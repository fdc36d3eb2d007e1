/**
 * Every `strata` subcommand, in the order `strata --help` lists them. A new command
 * (such as `replay`) is added here and nowhere else.
 */
import { assembleCommand } from "./assemble.ts"
import { chat } from "./chat.ts"
import { config } from "./config.ts"
import { explain } from "./explain.ts"
import { breakdown, hud } from "./hud.ts"
import { init } from "./init.ts"
import { map, tree } from "./map.ts"
import { mcp } from "./mcp.ts"
import { proxy } from "./proxy.ts"
import { replayCommand } from "./replay.ts"
import { ui } from "./ui.ts"

export const COMMANDS = [init, config, map, tree, assembleCommand, breakdown, hud, explain, chat, replayCommand, proxy, ui, mcp] as const
