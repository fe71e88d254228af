/**
 * The IP policies' and vaults' facts as the local server states them (account-resources.md
 * sections 2 and 3): ID prefixes, limits and error codes in this project's `ERR_SVC_<n>` form.
 * The server keeps its own statement (it is the oracle a client is tested against).
 */
import { ID_PREFIX } from '../hosted/edge-api.js';

export const ACCOUNT_ID_PREFIX = {
  ipPolicy: ID_PREFIX.ipPolicy,
  ipPolicyRule: 'ipr_',
  vault: 'vault_',
  secret: 'secret_',
} as const;

export const ACCOUNT_LIMITS = {
  /** *(unconfirmed)* on the service; the numbers the local implementation uses. */
  ipPoliciesPerAccount: 50,
  rulesPerIpPolicy: 1_000,
  vaultsPerAccount: 5,
  secretsPerVault: 500,
  /** Vault and secret names, in characters. */
  nameChars: 64,
  /** A secret's value, in UTF-8 bytes (16 KiB). */
  secretValueBytes: 16 * 1024,
} as const;

export const IP_POLICY_ERROR_CODE = {
  policyNotFound: 'ERR_SVC_1402',
  ruleNotFound: 'ERR_SVC_1404',
  badCidr: 'ERR_SVC_1406',
  duplicateCidr: 'ERR_SVC_1408',
  notLowestAddress: 'ERR_SVC_1409',
  tooManyPolicies: 'ERR_SVC_1410',
  tooManyRules: 'ERR_SVC_1411',
  noMask: 'ERR_SVC_1413',
  unknownPolicy: 'ERR_SVC_1414',
  ruleDescriptionTooLong: 'ERR_SVC_1421',
  badAction: 'ERR_SVC_1422',
} as const;

export const VAULT_ERROR_CODE = {
  vaultNameChars: 'ERR_SVC_23000',
  vaultNameEmpty: 'ERR_SVC_23001',
  vaultNameTooLong: 'ERR_SVC_23002',
  vaultNotEmpty: 'ERR_SVC_23003',
  vaultNameTaken: 'ERR_SVC_23004',
  tooManyVaults: 'ERR_SVC_23005',
  secretNameChars: 'ERR_SVC_24000',
  secretNameEmpty: 'ERR_SVC_24001',
  secretNameTooLong: 'ERR_SVC_24002',
  emptyValue: 'ERR_SVC_24003',
  valueTooLarge: 'ERR_SVC_24004',
  secretNameTaken: 'ERR_SVC_24005',
  unknownVaultId: 'ERR_SVC_24006',
  tooManySecrets: 'ERR_SVC_24007',
  noVault: 'ERR_SVC_24008',
  unknownVaultName: 'ERR_SVC_24009',
} as const;

export type AccountErrorCode =
  | (typeof IP_POLICY_ERROR_CODE)[keyof typeof IP_POLICY_ERROR_CODE]
  | (typeof VAULT_ERROR_CODE)[keyof typeof VAULT_ERROR_CODE];
