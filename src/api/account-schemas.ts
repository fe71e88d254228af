/**
 * The wire shapes of IP policies, their rules, vaults and their secrets (account-resources.md
 * sections 2 and 3) as zod schemas: read shapes (validated at the client edge, unknown fields
 * dropped as for every record, an unset description or metadata absent) and write shapes
 * (strict, like the service). A secret's value is only ever written: no read shape has it.
 */
import { z } from 'zod';

const ref = z.object({ id: z.string() });
const described = { description: z.string().optional(), metadata: z.string().optional() };
const page = { uri: z.string(), next_page_uri: z.string().nullable() };

// ---- read shapes ----------------------------------------------------------------------------

export const ipPolicySchema = z.object({ id: z.string(), created_at: z.string(), ...described });

export const ipPolicyRuleSchema = z.object({
  id: z.string(),
  created_at: z.string(),
  ...described,
  cidr: z.string(),
  ip_policy: ref,
  /** `allow` or `deny`, read as a plain string (the service may add more). */
  action: z.string(),
});

export const vaultSchema = z.object({
  id: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
  name: z.string(),
  ...described,
  created_by: z.string().optional(),
  last_updated_by: z.string().optional(),
});

export const secretSchema = z.object({
  id: z.string(),
  created_at: z.string(),
  /** Moves on every change: how a change made outside Git shows. */
  updated_at: z.string(),
  name: z.string(),
  ...described,
  created_by: ref.optional(),
  last_updated_by: ref.optional(),
  vault: ref,
  vault_name: z.string(),
});

export const ipPolicyListSchema = z.object({ ip_policies: z.array(ipPolicySchema), ...page });
export const ipPolicyRuleListSchema = z.object({
  ip_policy_rules: z.array(ipPolicyRuleSchema),
  ...page,
});
export const vaultListSchema = z.object({ vaults: z.array(vaultSchema), ...page });
/** `GET /vault_secrets` and `GET /vaults/{id}/secrets` share it. */
export const secretListSchema = z.object({ secrets: z.array(secretSchema), ...page });

export type IpPolicy = z.infer<typeof ipPolicySchema>;
export type IpPolicyRule = z.infer<typeof ipPolicyRuleSchema>;
export type Vault = z.infer<typeof vaultSchema>;
export type Secret = z.infer<typeof secretSchema>;

// ---- write shapes ---------------------------------------------------------------------------

/** `POST /ip_policies` and `PATCH /ip_policies/{id}`. */
export const ipPolicyWriteSchema = z.strictObject(described);

/** `POST /ip_policy_rules`: `cidr`, `ip_policy_id` and `action` required. */
export const ipPolicyRuleCreateSchema = z.strictObject({
  cidr: z.string(),
  ip_policy_id: z.string(),
  action: z.enum(['allow', 'deny']),
  ...described,
});

/** `PATCH /ip_policy_rules/{id}`: a rule's action and policy never change in place. */
export const ipPolicyRuleUpdateSchema = z.strictObject({
  cidr: z.string().optional(),
  ...described,
});

/** `POST /vaults` (`name` required) and `PATCH /vaults/{id}`. */
export const vaultCreateSchema = z.strictObject({ name: z.string(), ...described });
export const vaultUpdateSchema = vaultCreateSchema.partial();

/** `POST /vault_secrets`: the vault by `vault_id` or `vault_name`. */
export const secretCreateSchema = z.strictObject({
  name: z.string(),
  value: z.string(),
  vault_id: z.string().optional(),
  vault_name: z.string().optional(),
  ...described,
});

/** `PATCH /vault_secrets/{id}`: a secret never moves to another vault in place. */
export const secretUpdateSchema = z.strictObject({
  name: z.string().optional(),
  value: z.string().optional(),
  ...described,
});

export type IpPolicyWrite = z.input<typeof ipPolicyWriteSchema>;
export type IpPolicyRuleCreate = z.input<typeof ipPolicyRuleCreateSchema>;
export type IpPolicyRuleUpdate = z.input<typeof ipPolicyRuleUpdateSchema>;
export type VaultCreate = z.input<typeof vaultCreateSchema>;
export type VaultUpdate = z.input<typeof vaultUpdateSchema>;
export type SecretCreate = z.input<typeof secretCreateSchema>;
export type SecretUpdate = z.input<typeof secretUpdateSchema>;
