// The standard OIDC profile claims (OIDC Core §5.1) Tessera's identity provider knows, by their claim names: the
// ones an end-user may set (identity subgraph) and the ones its discovery document lists (REST layer), one list.
export const PROFILE_CLAIMS = [
  'name',
  'given_name',
  'family_name',
  'middle_name',
  'nickname',
  'preferred_username',
  'picture',
  'website',
  'gender',
  'birthdate',
  'zoneinfo',
  'locale',
  'phone_number',
] as const;
