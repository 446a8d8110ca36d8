// Turns argv into what to run: the command, its positionals and flags, and the connection
// (flags win over GROUPQ_URL/GROUPQ_TOKEN). Global flags may stand before or after the command.
// A family's commands are two words (`queue create`, `repeats list`). Every mistake seen here is
// a UsageError (exit 2) before any request is made; values only the server checks (a job state,
// a queue name, a setting's range) come back from it as API errors (exit 1).
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { UsageError } from './output';
import { COMMANDS, type CommandSpec, type FlagSpec, GLOBAL_FLAGS, familyChoices, familyOf, findCommand } from './usage';

type ParseOptions = Record<string, { type: 'string' | 'boolean'; short?: string; multiple?: boolean }>;
/** A flag's value: a list for a flag that may be repeated (FlagSpec.multiple). */
export type FlagValues = Record<string, string | boolean | string[] | undefined>;

export type Invocation =
  /** `family`: the help of a family of commands (`groupq queue --help`). */
  | { kind: 'help'; command?: CommandSpec; family?: string }
  | { kind: 'version' }
  | {
      kind: 'run';
      command: CommandSpec;
      /** The positionals after the command name. */
      args: string[];
      flags: FlagValues;
      json: boolean;
      url: string;
      token: string;
    };

function toParseOptions(...groups: Record<string, FlagSpec>[]): ParseOptions {
  const options: ParseOptions = {};
  for (const group of groups) {
    for (const [name, spec] of Object.entries(group)) {
      options[name] = { type: spec.type, ...(spec.short ? { short: spec.short } : {}), ...(spec.multiple ? { multiple: true } : {}) };
    }
  }
  return options;
}

/** Whether argv asks for JSON, read before parsing so that a usage error can be JSON too. */
export function wantsJson(argv: readonly string[]): boolean {
  const end = argv.indexOf('--');
  return (end === -1 ? argv : argv.slice(0, end)).includes('--json');
}

/**
 * The command's name: the first positional (and the second after a family's word), found by a
 * lenient parse that knows every flag of every command, so that a flag's value (`--group
 * queues`) is not taken for a command. `help`: whether --help or -h was given.
 */
function commandName(argv: string[]): { words: string[]; help: boolean } {
  const { tokens } = parseArgs({
    args: argv,
    options: toParseOptions(GLOBAL_FLAGS, ...COMMANDS.map((command) => command.flags)),
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  const positionals = tokens.flatMap((token) => (token.kind === 'positional' ? [token.value] : []));
  const help = tokens.some((token) => token.kind === 'option' && token.name === 'help');
  const [first, second] = positionals;
  if (first === undefined) return { words: [], help };
  return { words: familyOf(first).length > 0 && second !== undefined ? [first, second] : [first], help };
}

export function parseInvocation(argv: string[], env: Record<string, string | undefined>): Invocation {
  const { words, help } = commandName(argv);
  if (words.length === 0) return parseBare(argv);
  if (words[0] === 'help') return helpFor(argv);
  const name = words.join(' ');
  const command = findCommand(name);
  if (!command) {
    const family = words[0]!;
    if (familyOf(family).length === 0) throw new UsageError(`unknown command "${name}"`);
    if (help) return { kind: 'help', family };
    const choices = familyChoices(family);
    if (words.length === 1) throw new UsageError(`${family} needs a command: ${choices}`, family);
    throw new UsageError(`unknown command "${name}" (${family} takes ${choices})`, family);
  }

  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: toParseOptions(GLOBAL_FLAGS, command.flags),
      strict: true,
      allowPositionals: true,
    });
  } catch (error) {
    throw new UsageError(parseArgsMessage(error, command), command.name);
  }
  const { values, positionals } = parsed as { values: FlagValues; positionals: string[] };
  if (values.help) return { kind: 'help', command };
  if (values.version) return { kind: 'version' };

  // The first positionals are the command's name (see commandName).
  const args = positionals.slice(words.length);
  checkArity(command, args);

  const url = typeof values.url === 'string' ? values.url : env.GROUPQ_URL;
  const token = typeof values.token === 'string' ? values.token : env.GROUPQ_TOKEN;
  if (!url) throw new UsageError('no Worker URL: set GROUPQ_URL or pass --url <url>', command.name);
  if (!token && command.needsToken !== false) throw new UsageError('no admin token: set GROUPQ_TOKEN or pass --token <token>', command.name);
  checkUrl(url, command.name);
  return { kind: 'run', command, args, flags: values, json: values.json === true, url, token: token ?? '' };
}

/** No command: --version, --help, or nothing at all (which is a usage error). */
function parseBare(argv: string[]): Invocation {
  let values: FlagValues;
  try {
    ({ values } = parseArgs({ args: argv, options: toParseOptions(GLOBAL_FLAGS), strict: true, allowPositionals: false }) as { values: FlagValues });
  } catch (error) {
    throw new UsageError(parseArgsMessage(error));
  }
  if (values.version) return { kind: 'version' };
  if (values.help) return { kind: 'help' };
  throw new UsageError('no command given');
}

/** `groupq help [command]`. */
function helpFor(argv: string[]): Invocation {
  const { positionals } = parseArgs({ args: argv, options: toParseOptions(GLOBAL_FLAGS), strict: false, allowPositionals: true });
  const [, topic, sub] = positionals;
  if (topic === undefined) return { kind: 'help' };
  if (familyOf(topic).length > 0) {
    if (sub === undefined) return { kind: 'help', family: topic };
    const command = findCommand(`${topic} ${sub}`);
    if (!command) throw new UsageError(`unknown command "${topic} ${sub}" (${topic} takes ${familyChoices(topic)})`, topic);
    return { kind: 'help', command };
  }
  const command = findCommand(topic);
  if (!command) throw new UsageError(`unknown command "${topic}"`);
  return { kind: 'help', command };
}

function checkArity(command: CommandSpec, args: string[]): void {
  if (args.length < command.min) {
    const wanted = command.args.split(' ')[args.length] ?? command.args;
    throw new UsageError(`missing ${wanted}`, command.name);
  }
  if (args.length > command.max) {
    throw new UsageError(`unexpected argument "${args[command.max]}"`, command.name);
  }
}

function checkUrl(url: string, command: string): void {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UsageError(`the Worker URL "${url}" is not an absolute URL (GROUPQ_URL or --url)`, command);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new UsageError(`the Worker URL must be http(s), not ${parsed.protocol} (GROUPQ_URL or --url)`, command);
  }
}

/**
 * node's parseArgs messages; for an unknown flag only the first sentence. An unknown short flag
 * (`-l` of `groupq job orders -lxi…`) is most likely an id, a group or a key led by '-', so for a
 * command that takes arguments the message says where such an argument goes: after `--`.
 */
function parseArgsMessage(error: unknown, command?: CommandSpec): string {
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: string }).code;
  let text = message;
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    text = message.split(/\.\s/)[0]!;
    if (command && command.max > 0 && /^Unknown option '-[^-]/.test(text)) {
      text += ` (an argument led by "-" goes after "--": groupq ${command.name} [flags] -- ${command.args})`;
    }
  }
  return text.replace(/^./, (c) => c.toLowerCase());
}

/**
 * A flag holding a whole number in [min, max]; undefined when the flag was not given. (A
 * negative value is given as `--name=-5`: `--name -5` reads as a flag.)
 */
export function intFlag(flags: FlagValues, name: string, command: string, min: number, max = Number.MAX_SAFE_INTEGER): number | undefined {
  const raw = flags[name];
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (typeof raw !== 'string' || !/^-?\d+$/.test(raw.trim()) || value < min || value > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `at least ${min}` : `${min} to ${max}`;
    throw new UsageError(`--${name} must be a whole number, ${range} (got "${String(raw)}")`, command);
  }
  return value;
}

/**
 * --data's JSON, parsed here so that a typo never reaches the queue: the flag's text, `@<file>`
 * for a file's (as curl takes it), or `-` for standard input's.
 */
export async function jsonFlag(flags: FlagValues, name: string, command: string, stdin?: AsyncIterable<string | Uint8Array>): Promise<unknown> {
  const given = flags[name];
  if (typeof given !== 'string') return undefined;
  let raw = given;
  try {
    if (given === '-') raw = await readAll(stdin ?? process.stdin);
    else if (given.startsWith('@')) raw = await readFile(given.slice(1), 'utf8');
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new UsageError(`--${name} ${given}: cannot read it: ${reason}`, command);
  }
  try {
    return JSON.parse(raw);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new UsageError(`--${name} is not valid JSON: ${reason}`, command);
  }
}

async function readAll(stream: AsyncIterable<string | Uint8Array>): Promise<string> {
  const decoder = new TextDecoder();
  let text = '';
  for await (const chunk of stream) text += typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
  return text + decoder.decode();
}
