/**
 * Every flag of every command, once: its name, type, short form, the value it takes, its
 * default, the environment variable that also sets it, its help text and the commands that take
 * it. Each command's parser options (`commandOptions`), its `--help` (./flag-help.ts), shell
 * completion (`edgesync completion`) and docs/reference/cli-flags.md (scripts/docs.mjs) are all
 * generated from this table, so a flag is added, documented and completed in one place.
 *
 * Two entries may share a name when they are different flags of different commands (`--out` is
 * a plan file for `plan`, a directory for `import`); where one flag says something particular
 * in one command (`--owner`'s fallbacks differ), `helpFor` holds that command's text. The
 * defaults are stated here as users read them: a command with no constant of its own falls
 * back to this one (`flagDefault`), and a test holds the others to the constants the commands
 * fall back to (importing those here would load the engine into every command's start-up).
 */
import { EdgesyncError } from '../errors.js';

/**
 * Every command's name, in the order `edgesync --help` lists them. The command table
 * (./command-table.ts, and ./commands.ts for `completion`) is typed to hold exactly these.
 */
export const COMMAND_NAMES = [
  'run',
  'server',
  'validate',
  'plan',
  'schema',
  'apply',
  'import',
  'release',
  'migrate',
  'test',
  'status',
  'reconcile',
  'suspend',
  'resume',
  'completion',
] as const;
export type CommandName = (typeof COMMAND_NAMES)[number];

/** Sections of a command's help after its options; a flag without one is in `options:`. */
export const FLAG_GROUPS = {
  'leader-election': {
    title: 'leader election (several replicas, one writer; Kubernetes Lease, see docs/daemon.md):',
    note: 'Identity: $POD_NAME, else host name and PID. Cluster access: $KUBECONFIG or in-cluster.',
  },
} as const;

export interface FlagSpec {
  readonly name: string;
  readonly type: 'string' | 'boolean';
  readonly short?: string;
  /** Repeatable: the values come as a list. */
  readonly multiple?: true;
  /** What its value is called in the help: `ID`, `DIR`, or its choices, `text|json`. */
  readonly value?: string;
  /** Where a command's value is another (`plan --output` also takes markdown). */
  readonly valueFor?: { readonly [C in CommandName]?: string };
  /** The default, as the help states it (not for flags whose absence means "none"). */
  readonly default?: string;
  /** The environment variable that also sets it (its help says which wins). */
  readonly env?: string;
  readonly help: string;
  /** Where a command says more or other than `help`. */
  readonly helpFor?: { readonly [C in CommandName]?: string };
  readonly commands: readonly CommandName[];
  readonly group?: keyof typeof FLAG_GROUPS;
}

const MANIFEST_COMMANDS = ['validate', 'plan', 'apply', 'run', 'test'] as const;
const API_COMMANDS = ['plan', 'apply', 'run', 'import', 'release'] as const;
const GUARDED_COMMANDS = ['plan', 'apply', 'run'] as const;
const DAEMON_COMMANDS = ['status', 'reconcile', 'suspend', 'resume'] as const;

/** In the order each command's help lists them. */
export const FLAGS = [
  // apply
  {
    name: 'yes',
    type: 'boolean',
    short: 'y',
    help: 'apply without asking (required when not on a terminal)',
    commands: ['apply'],
  },
  // plan, apply, validate, test, status
  {
    name: 'output',
    type: 'string',
    short: 'o',
    value: 'text|json',
    valueFor: { plan: 'text|json|markdown' },
    default: 'text',
    help: 'text diagnostics on stderr (default), or a versioned JSON report on stdout',
    helpFor: {
      plan: 'output format on stdout (default text)',
      apply:
        'json: print the result (operations done, failed, skipped, writes, errors, converged) as versioned JSON on stdout (default text)',
      test: 'each case on stderr (default), or a versioned JSON report on stdout',
      status: "a table (default), or the daemon's /status document (JSON) on stdout",
    },
    commands: ['validate', 'plan', 'apply', 'test', 'status'],
  },
  // plan
  {
    name: 'out',
    type: 'string',
    value: 'FILE',
    help: 'also save the plan (secrets masked) with fingerprints, for "apply FILE"',
    commands: ['plan'],
  },
  {
    name: 'detailed-exitcode',
    type: 'boolean',
    help: 'exit 2 when there are changes (0 none, 1 error)',
    commands: ['plan'],
  },
  // import
  {
    name: 'out',
    type: 'string',
    value: 'DIR',
    default: '.',
    help: 'where to write the files (default: the current directory)',
    commands: ['import'],
  },
  {
    name: 'all',
    type: 'boolean',
    help: 'also edges, cloud endpoints and resources of other kinds edgesync does not manage (made by hand), with id: so that applying adopts them',
    commands: ['import'],
  },
  // migrate
  {
    name: 'out',
    type: 'string',
    value: 'OUTDIR',
    help: 'where to write the migrated manifests (outside DIR)',
    commands: ['migrate'],
  },
  {
    name: 'backend',
    type: 'string',
    multiple: true,
    value: 'ID=URL',
    help: 'the internal URL that replaces backend ID (repeatable), e.g. --backend bkdtg_2kt3...=https://web.internal',
    commands: ['migrate'],
  },
  {
    name: 'backends',
    type: 'string',
    value: 'FILE',
    help: 'a YAML or JSON mapping of backend ID to internal URL',
    commands: ['migrate'],
  },
  {
    name: 'allow-lossy',
    type: 'boolean',
    help: 'write despite warnings (harmless losses), acknowledging each in the output; errors (translations that would let through traffic the edge refused) always stop the migration',
    commands: ['migrate'],
  },
  // run
  {
    name: 'interval',
    type: 'string',
    value: 'DUR',
    default: '60s',
    help: 'periodic resync (default 60s)',
    commands: ['run'],
  },
  {
    name: 'debounce',
    type: 'string',
    value: 'DUR',
    default: '250ms',
    help: 'quiet time after a file change (default 250ms)',
    commands: ['run'],
  },
  {
    name: 'listen',
    type: 'string',
    value: 'HOST:PORT',
    default: '127.0.0.1:9090',
    help: 'health, readiness, metrics and status (default 127.0.0.1:9090)',
    commands: ['run'],
  },
  {
    name: 'admin-listen',
    type: 'string',
    value: 'HOST:PORT',
    help: 'a loopback-only listener (e.g. 127.0.0.1:9091) serving POST /-/suspend, /-/resume and /-/reconcile without a token',
    commands: ['run'],
  },
  // status, reconcile, suspend, resume
  {
    name: 'url',
    type: 'string',
    value: 'URL',
    default: 'http://127.0.0.1:9090',
    env: 'EDGESYNC_DAEMON_URL',
    help: "the daemon's address (else $EDGESYNC_DAEMON_URL, else http://127.0.0.1:9090, the local daemon on run's default --listen)",
    commands: DAEMON_COMMANDS,
  },
  {
    name: 'control-token-file',
    type: 'string',
    value: 'FILE',
    env: 'EDGESYNC_CONTROL_TOKEN',
    help: "the daemon's control token (also EDGESYNC_CONTROL_TOKEN); not needed for a daemon listening on loopback only, or on its --admin-listen",
    helpFor: {
      run: 'the bearer token those POSTs need on --listen (also EDGESYNC_CONTROL_TOKEN). Without a token or --admin-listen they are off when --listen is not a loopback address.',
    },
    commands: ['run', ...DAEMON_COMMANDS],
  },
  {
    name: 'timeout',
    type: 'string',
    value: 'DURATION',
    default: '10s',
    help: "how long to wait for the daemon's answer (default 10s)",
    commands: DAEMON_COMMANDS,
  },
  {
    name: 'grace',
    type: 'string',
    value: 'DUR',
    default: '10s',
    help: 'how long SIGTERM waits for the API call in flight (default 10s)',
    commands: ['run'],
  },
  // import, release
  {
    name: 'force',
    type: 'boolean',
    help: 'overwrite existing files',
    commands: ['import'],
  },
  {
    name: 'dry-run',
    type: 'boolean',
    help: 'show what would be released; write nothing',
    commands: ['release'],
  },
  // the manifests and the account
  {
    name: 'owner',
    type: 'string',
    value: 'ID',
    env: 'EDGESYNC_OWNER',
    help: 'owner id stored in edge metadata (else EDGESYNC_OWNER, else DIR/.edgesync-owner, else "default"; counts towards its 4096-byte limit)',
    helpFor: {
      test: 'owner id, as for validate (else EDGESYNC_OWNER, else DIR/.edgesync-owner, else "default")',
      plan: 'owner id of the edges edgesync manages (else EDGESYNC_OWNER, else DIR/.edgesync-owner, else "default"; --out needs one chosen)',
      apply:
        'owner id of the edges edgesync manages; required, unless a saved plan, EDGESYNC_OWNER or DIR/.edgesync-owner names it (in that order)',
      run: 'owner id of the edges edgesync manages (also EDGESYNC_OWNER, or DIR/.edgesync-owner, read at start); required against a configured API in enforce mode; "default" for the embedded server',
      import:
        'owner id whose edges and cloud endpoints to import (else EDGESYNC_OWNER, else .edgesync-owner in the --out directory, else "default")',
      release:
        'owner id that manages the edges; required (unless --dry-run), or EDGESYNC_OWNER, or .edgesync-owner in $EDGESYNC_DIR (else the current directory)',
    },
    commands: [...MANIFEST_COMMANDS, 'import', 'release'],
  },
  {
    name: 'schema-url',
    type: 'string',
    value: 'URL',
    help: "the $schema of the yaml-language-server line (default: this package's schema, relative to DIR when both are in one repository; otherwise a copy written to DIR as edgesync.schema.json)",
    commands: ['import'],
  },
  {
    name: 'concurrency',
    type: 'string',
    value: 'N',
    default: '4',
    help: 'edges applied in parallel (default 4)',
    commands: ['apply', 'run'],
  },
  {
    name: 'rate-limit',
    type: 'string',
    value: 'N/Ws',
    default: '120/60s',
    env: 'EDGESYNC_RATE_LIMIT',
    help: "client-side budget per rolling window, or none (default: 120/60s, the hosted service's; also EDGESYNC_RATE_LIMIT)",
    helpFor: {
      run: "client-side budget per rolling window, or none (default: 120/60s, the hosted service's; none against the embedded server; also EDGESYNC_RATE_LIMIT)",
    },
    commands: API_COMMANDS,
  },
  {
    name: 'mode',
    type: 'string',
    value: 'MODE',
    default: 'enforce',
    env: 'EDGESYNC_MODE',
    help: 'enforce (default) or observe: plan every cycle, report each difference as drift, never write (also EDGESYNC_MODE)',
    commands: ['run'],
  },
  {
    name: 'suspended',
    type: 'boolean',
    help: 'start suspended: observe until POST /-/resume',
    commands: ['run'],
  },
  {
    name: 'notify',
    type: 'string',
    multiple: true,
    value: 'URL',
    env: 'EDGESYNC_NOTIFY',
    help: "POST every event (drift, changed, blocked, invalid, error, recovered, suspended, resumed) to URL; repeatable (also EDGESYNC_NOTIFY, comma-separated). FORMAT=URL gives a receiver its own format: json, slack, or github / gitlab: a commit status (success, failure, pending) on the revision each cycle read, posted to the repository's API URL (github=https://api.github.com/repos/OWNER/REPO, token in EDGESYNC_GITHUB_TOKEN; gitlab=https://HOST/api/v4/projects/ID, token in EDGESYNC_GITLAB_TOKEN)",
    commands: ['run'],
  },
  {
    name: 'notify-format',
    type: 'string',
    value: 'F',
    default: 'json',
    help: 'the format of a --notify URL given without one: json (default) or slack (incoming-webhook body)',
    commands: ['run'],
  },
  {
    name: 'resync-budget',
    type: 'string',
    value: 'F',
    default: '0.25',
    help: "share of the API budget periodic resyncs may use (default 0.25): the resync interval stretches with the account's size (shown in /status)",
    commands: ['run'],
  },
  {
    name: 'max-deletes',
    type: 'string',
    value: 'N',
    default: '10',
    help: 'refuse a plan deleting more edges and cloud endpoints (together) than N (default 10)',
    helpFor: {
      run: 'refuse a cycle deleting more edges and cloud endpoints (together) than N (default 10)',
    },
    commands: GUARDED_COMMANDS,
  },
  {
    name: 'allow-empty',
    type: 'boolean',
    help: 'let an empty manifest set delete the edges and cloud endpoints it owns',
    commands: GUARDED_COMMANDS,
  },
  {
    name: 'no-wait-for-domains',
    type: 'boolean',
    help: 'create cloud endpoints on reserved domains that are not ready yet (whose certificate still waits for DNS); by default they are held back and created once the domain is ready',
    commands: GUARDED_COMMANDS,
  },
  {
    name: 'target',
    type: 'string',
    multiple: true,
    value: 'ADDRESS',
    help: "plan only this resource (repeatable): https_edge.NAME, tls_edge.NAME, cloud_endpoint.NAME or bot_user.NAME (a route's address: its edge). Nothing else is planned or deleted; not with --out",
    helpFor: {
      apply:
        "apply only this resource (repeatable): https_edge.NAME, tls_edge.NAME, cloud_endpoint.NAME or bot_user.NAME (a route's address: its edge). Nothing else is planned, written or deleted; not with a PLANFILE",
    },
    commands: ['plan', 'apply'],
  },
  {
    name: 'dir',
    type: 'string',
    value: 'DIR',
    env: 'EDGESYNC_DIR',
    help: 'the manifest directory: alone, the same as "apply DIR"; with a PLANFILE, its manifests (default: the one recorded in the plan file by "plan --out", else $EDGESYNC_DIR, else the current directory)',
    commands: ['apply'],
  },
  {
    name: 'secret-dir',
    type: 'string',
    multiple: true,
    value: 'DIR',
    help: 'a directory outside DIR that { file: ... } references may read (repeatable)',
    commands: [...MANIFEST_COMMANDS, 'migrate'],
  },
  {
    name: 'secret-digest-key-file',
    type: 'string',
    value: 'FILE',
    env: 'EDGESYNC_SECRET_DIGEST_KEY_FILE',
    help: "a file holding the key of the keyed digest (HMAC-SHA-256) each Secret's value is compared through (also $EDGESYNC_SECRET_DIGEST_KEY_FILE; else $EDGESYNC_SECRET_DIGEST_KEY); the same for every replica and across restarts",
    commands: ['plan', 'apply', 'run'],
  },
  {
    name: 'exclude',
    type: 'string',
    multiple: true,
    value: 'GLOB',
    env: 'EDGESYNC_EXCLUDE',
    help: 'skip files and directories matching GLOB, relative to DIR (repeatable; also $EDGESYNC_EXCLUDE, comma-separated), e.g. "k8s/**"',
    helpFor: {
      migrate:
        'do not migrate files and directories matching GLOB, relative to DIR (repeatable; also $EDGESYNC_EXCLUDE, comma-separated): an excluded file that declares edges is copied unchanged, so that applying OUTDIR keeps them',
    },
    commands: [...MANIFEST_COMMANDS, 'migrate'],
  },
  {
    name: 'no-color',
    type: 'boolean',
    env: 'NO_COLOR',
    help: 'no colours in text output (also: NO_COLOR set, or stdout not a terminal)',
    commands: ['plan'],
  },
  {
    name: 'state-dir',
    type: 'string',
    value: 'DIR',
    default: '.edgesync',
    help: 'embedded server state (default .edgesync)',
    commands: ['run'],
  },
  {
    name: 'embedded-port',
    type: 'string',
    value: 'N',
    default: '8787',
    help: 'port of the embedded server (default 8787; 0: any free port)',
    commands: ['run'],
  },
  {
    name: 'log-level',
    type: 'string',
    value: 'LEVEL',
    default: 'info',
    env: 'EDGESYNC_LOG_LEVEL',
    help: 'pino level (default info; also EDGESYNC_LOG_LEVEL)',
    commands: ['run'],
  },
  {
    name: 'api-url',
    type: 'string',
    value: 'URL',
    env: 'EDGESYNC_API_URL',
    help: 'Edge API base URL (or EDGESYNC_API_URL)',
    commands: API_COMMANDS,
  },
  {
    name: 'api-key',
    type: 'string',
    value: 'KEY',
    env: 'EDGESYNC_API_KEY',
    help: 'Edge API key (or EDGESYNC_API_KEY)',
    commands: API_COMMANDS,
  },
  // run: leader election
  {
    name: 'leader-elect',
    type: 'boolean',
    help: 'only the replica holding the Lease writes; the others observe',
    commands: ['run'],
    group: 'leader-election',
  },
  {
    name: 'lease-name',
    type: 'string',
    value: 'NAME',
    default: 'edgesync-<owner>',
    help: 'the Lease (default edgesync-<owner>)',
    commands: ['run'],
    group: 'leader-election',
  },
  {
    name: 'lease-namespace',
    type: 'string',
    value: 'NS',
    help: "its namespace (default: the pod's namespace in a cluster, else default)",
    commands: ['run'],
    group: 'leader-election',
  },
  {
    name: 'lease-duration',
    type: 'string',
    value: 'DUR',
    default: '15s',
    help: 'how long a silent holder keeps it (default 15s; whole seconds)',
    commands: ['run'],
    group: 'leader-election',
  },
  {
    name: 'renew-deadline',
    type: 'string',
    value: 'DUR',
    default: '10s',
    help: 'a leader that could not renew for this long stops writing (default 10s)',
    commands: ['run'],
    group: 'leader-election',
  },
  {
    name: 'retry-period',
    type: 'string',
    value: 'DUR',
    default: '2s',
    help: 'how often to renew or try to acquire (default 2s)',
    commands: ['run'],
    group: 'leader-election',
  },
  // server: the local Edge API
  {
    name: 'host',
    type: 'string',
    value: 'HOST',
    default: '127.0.0.1',
    help: 'listen address (default 127.0.0.1)',
    commands: ['server'],
  },
  {
    name: 'port',
    type: 'string',
    value: 'PORT',
    default: '8787',
    help: 'listen port, 0 for any free port (default 8787)',
    commands: ['server'],
  },
  {
    name: 'data',
    type: 'string',
    value: 'DIR',
    help: "persist state under DIR (default: memory only); one process per DIR: a second one refuses to start, naming the first one's pid",
    commands: ['server'],
  },
  {
    name: 'salvage',
    type: 'boolean',
    help: 'start even if the journal under --data is damaged: keep every record whose checksum holds, move the damaged file aside (*.corrupt)',
    commands: ['server'],
  },
  {
    name: 'api-key',
    type: 'string',
    multiple: true,
    value: 'KEY',
    env: 'EDGESYNC_SERVER_API_KEYS',
    help: 'accepted API key, one account per key; repeatable (also EDGESYNC_SERVER_API_KEYS=key1,key2; none: one is generated)',
    commands: ['server'],
  },
  {
    name: 'public-url',
    type: 'string',
    value: 'URL',
    help: 'base of the absolute URIs in responses (default: the listening URL)',
    commands: ['server'],
  },
  {
    name: 'rate-limit',
    type: 'string',
    value: 'N/Ws',
    help: 'per account: N requests per rolling W seconds, then 429 (e.g. 120/60s)',
    commands: ['server'],
  },
  {
    name: 'latency',
    type: 'string',
    value: 'MS|MIN-MAX',
    help: 'delay every request by MS, or uniformly MIN..MAX, milliseconds',
    commands: ['server'],
  },
  {
    name: 'fault-rate',
    type: 'string',
    value: 'R',
    help: 'answer a share R (0..1) of requests 503 without performing them',
    commands: ['server'],
  },
  {
    name: 'reset-rate',
    type: 'string',
    value: 'R',
    help: 'reset the connection of a share R (0..1) of requests after reading them (writes are performed first: outcome unknown to the client)',
    commands: ['server'],
  },
  {
    name: 'read-only-edges',
    type: 'boolean',
    help: 'account state: every write to edges is refused (403 ERR_SVC_7301)',
    commands: ['server'],
  },
  {
    name: 'no-edge-access',
    type: 'boolean',
    help: 'account state: every request to edges is refused (403 ERR_SVC_7302)',
    commands: ['server'],
  },
  {
    name: 'agent-endpoint',
    type: 'string',
    multiple: true,
    value: 'URL',
    help: 'seed a read-only agent endpoint with this URL into every account, at each start (never persisted); repeatable',
    commands: ['server'],
  },
  {
    name: 'require-reserved-domains',
    type: 'boolean',
    help: 'a public http, https or tls cloud endpoint needs a reserved domain of its account (else 400 ERR_SVC_319, 318 for a wildcard host)',
    commands: ['server'],
  },
  {
    name: 'cnames-created',
    type: 'boolean',
    help: "every custom domain's CNAME record counts as created: its managed certificate is issued at once (default: provisioning never ends)",
    commands: ['server'],
  },
  // every command
  {
    name: 'help',
    type: 'boolean',
    short: 'h',
    help: 'show this help',
    commands: COMMAND_NAMES,
  },
] as const satisfies readonly FlagSpec[];

type Entry = (typeof FLAGS)[number];

/** The entries a command takes (a type: each command's options are typed from the table). */
type EntryOf<C extends CommandName, E = Entry> = E extends {
  readonly commands: readonly (infer X)[];
}
  ? C extends X
    ? E
    : never
  : never;

/** A command's options as node:util parseArgs takes them, typed literally from the table. */
export type OptionsOf<C extends CommandName> = {
  readonly [E in EntryOf<C> as E['name']]: E extends { readonly type: 'boolean' }
    ? { readonly type: 'boolean'; readonly short?: string; readonly default: false }
    : E extends { readonly multiple: true }
      ? { readonly type: 'string'; readonly short?: string; readonly multiple: true }
      : { readonly type: 'string'; readonly short?: string };
};

/** One flag as one command has it: its entry, with that command's value and help. */
export interface CommandFlag {
  readonly name: string;
  readonly type: 'string' | 'boolean';
  readonly short: string | undefined;
  readonly multiple: boolean;
  readonly value: string;
  readonly default: string | undefined;
  readonly env: string | undefined;
  readonly help: string;
  readonly group: keyof typeof FLAG_GROUPS | undefined;
}

/** The flags `command` takes, in the table's order, with its own value and help. */
export function flagsOf(command: CommandName): CommandFlag[] {
  const specs: readonly FlagSpec[] = FLAGS;
  return specs
    .filter((f) => f.commands.includes(command))
    .map((f) => ({
      name: f.name,
      type: f.type,
      short: f.short,
      multiple: f.multiple === true,
      value: f.valueFor?.[command] ?? f.value ?? '',
      default: f.default,
      env: f.env,
      help: f.helpFor?.[command] ?? f.help,
      group: f.group,
    }));
}

/**
 * The default the table states for `command`'s `--name`: the value a command falls back to
 * where no constant of its own states it (a default stated twice would drift).
 */
export function flagDefault(command: CommandName, name: string): string {
  const found = flagsOf(command).find((f) => f.name === name)?.default;
  if (found === undefined) {
    throw new EdgesyncError('ES_INTERNAL', `edgesync ${command} --${name} has no default`);
  }
  return found;
}

/** The parser's options for `command` (./flags.ts `parseCommandArgs` reads with them). */
export function commandOptions<C extends CommandName>(command: C): OptionsOf<C> {
  const options: Record<string, object> = {};
  for (const f of flagsOf(command)) {
    options[f.name] = {
      type: f.type,
      ...(f.short === undefined ? {} : { short: f.short }),
      ...(f.multiple ? { multiple: true } : {}),
      // Booleans are false when absent: a command never tells "not given" from "false".
      ...(f.type === 'boolean' ? { default: false } : {}),
    };
  }
  return options as OptionsOf<C>;
}
