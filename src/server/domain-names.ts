/**
 * Reserved domain names (account-resources.md section 1): the host-name rules with their codes,
 * whether a name is below the service's own domains, which reserved domain serves a host
 * (exactly, or under a wildcard), and which names two accounts cannot both hold. Pure.
 */
import { domainToUnicode } from 'node:url';
import {
  DOMAIN_ERROR_CODE as CODE,
  type DomainErrorCode,
  ACCOUNT_RESOURCE_LIMITS as LIMITS,
  MULTI_LABEL_PUBLIC_SUFFIXES,
  SERVICE_DOMAINS,
  SPECIAL_USE_TLDS,
} from './domain-codes.js';

export interface NameViolation {
  readonly code: DomainErrorCode;
  readonly message: string;
}

const violation = (code: DomainErrorCode, message: string): NameViolation => ({ code, message });

/** Why one label (not the wildcard) breaks a rule, or undefined. */
function labelViolation(label: string, shown: string): NameViolation | undefined {
  if (label.length > LIMITS.domainLabelMax) {
    return violation(
      CODE.labelTooLong,
      `${shown}: the label ${JSON.stringify(label.slice(0, 80))} is longer than ${LIMITS.domainLabelMax} characters`,
    );
  }
  if (label.startsWith('-')) {
    return violation(CODE.leadingDashOrDot, `${shown}: a label may not start with "-"`);
  }
  if (label.endsWith('-')) {
    return violation(CODE.trailingDashOrDot, `${shown}: a label may not end with "-"`);
  }
  if (label.slice(2, 4) === '--') {
    if (!label.startsWith('xn--')) {
      return violation(
        CODE.doubleDash,
        `${shown}: "--" at the third and fourth characters of a label only as "xn--" (${JSON.stringify(label)})`,
      );
    }
    if (domainToUnicode(label) === '') {
      return violation(
        CODE.badPunycode,
        `${shown}: ${JSON.stringify(label)} is not valid punycode`,
      );
    }
  }
  return undefined;
}

/**
 * The rules of a name to reserve, in the order the codes are most specific: length, the
 * characters, the dots, each label, the wildcard, then fully qualified and a public TLD.
 * `name` is lower-case.
 */
export function domainNameViolation(name: string): NameViolation | undefined {
  const shown = JSON.stringify(name.slice(0, 300));
  if (name.length > LIMITS.domainNameMax) {
    return violation(
      CODE.nameTooLong,
      `${shown} is longer than ${LIMITS.domainNameMax} characters`,
    );
  }
  if (name.includes('_')) return violation(CODE.underscore, `${shown}: "_" is not allowed`);
  if (!/^[a-z0-9.*-]*$/.test(name) || name === '') {
    return violation(CODE.badCharacter, `${shown}: only letters, digits, "-" and "." are allowed`);
  }
  if (name.startsWith('.') || name.startsWith('-')) {
    return violation(CODE.leadingDashOrDot, `${shown} may not start with "${name[0]}"`);
  }
  if (name.endsWith('.') || name.endsWith('-')) {
    return violation(CODE.trailingDashOrDot, `${shown} may not end with "${name.at(-1)}"`);
  }
  if (name.includes('..')) return violation(CODE.emptyLabel, `${shown} has an empty label ("..")`);
  const labels = name.split('.');
  for (const [i, label] of labels.entries()) {
    if (!label.includes('*')) continue;
    if (i > 0) {
      return violation(CODE.wildcardNotFirstLabel, `${shown}: "*" only as the first label`);
    }
    if (label !== '*') {
      return violation(
        CODE.wildcardPartialLabel,
        `${shown}: "*" only as a whole label ("*.example.com"), not inside one`,
      );
    }
  }
  for (const label of labels) {
    if (label === '*') continue;
    const broken = labelViolation(label, shown);
    if (broken !== undefined) return broken;
  }
  const base = labels[0] === '*' ? labels.slice(1) : labels;
  if (base.length < 2 || MULTI_LABEL_PUBLIC_SUFFIXES.has(base.join('.'))) {
    return violation(
      CODE.notFullyQualified,
      `${shown} is not a fully qualified name (a name below a public suffix, e.g. app.example.com)`,
    );
  }
  const tld = base.at(-1) as string;
  if (SPECIAL_USE_TLDS.has(tld) || !/^(?:[a-z]{2,63}|xn--[a-z0-9-]+)$/.test(tld)) {
    return violation(CODE.tldNotPublic, `${shown}: the TLD "${tld}" does not resolve publicly`);
  }
  return undefined;
}

export function isWildcard(name: string): boolean {
  return name.startsWith('*.');
}

/** The name a wildcard stands below (`*.example.com` -> `example.com`); a plain name itself. */
export function baseOf(name: string): string {
  return isWildcard(name) ? name.slice(2) : name;
}

/** Whether `name` is strictly below `parent`. */
export function isBelow(name: string, parent: string): boolean {
  return name.endsWith(`.${parent}`);
}

/** A name below the service's own domains (the wildcard's base for a wildcard). */
export function isServiceSubdomain(name: string): boolean {
  return SERVICE_DOMAINS.some((d) => isBelow(name, d));
}

/** One of the service's own domains itself, or a wildcard directly on one. */
export function isServiceDomain(name: string): boolean {
  return SERVICE_DOMAINS.some((d) => baseOf(name) === d);
}

/**
 * The reserved domain that serves `host`: the same name, else the nearest wildcard it is below.
 * A wildcard host (`*.example.com`) is served only by the same wildcard.
 */
export function domainFor<T extends { readonly domain: string }>(
  host: string,
  domains: Iterable<T>,
): T | undefined {
  let best: T | undefined;
  for (const d of domains) {
    if (d.domain === host) return d;
    if (isWildcard(host) || !isWildcard(d.domain) || !isBelow(host, baseOf(d.domain))) continue;
    if (best === undefined || d.domain.length > best.domain.length) best = d;
  }
  return best;
}

/**
 * Whether two accounts' names collide: an account owns its name and every name below it, so
 * neither may be equal to or below the other's (a wildcard stands for its base's names below).
 */
export function overlaps(a: string, b: string): boolean {
  const [x, y] = [baseOf(a), baseOf(b)];
  return x === y || isBelow(x, y) || isBelow(y, x);
}
