// How a project presents itself on the identity provider's hosted end-user pages (`/authorize`, sign-up, forgot
// password): its name (the project's), an optional logo and brand colour, and whether those pages offer sign-up and
// password reset. Set by the owning tenant; read by the front door for every hosted page (one primary-key read).
import { errors } from '../../../platform/errors.ts';
import { isUuid } from '../../../platform/ids.ts';
import type { ServiceDeps } from './context.ts';
import type { ProjectService } from './projects.ts';

export type ProjectBranding = {
  projectId: string;
  projectName: string;
  logoUrl: string | null;
  brandColor: string | null;
  hostedSignUp: boolean;
  hostedPasswordReset: boolean;
};

export type BrandingInput = {
  logoUrl?: unknown;
  brandColor?: unknown;
  hostedSignUp?: unknown;
  hostedPasswordReset?: unknown;
};

const LOGO_URL_MAX = 2048;
const COLOR = /^#[0-9a-f]{6}$/i;
// A host name or an address as the URL parser writes it: nothing that could end a CSP source or an HTML attribute.
const HOST = /^(?:[a-z0-9-]+(?:\.[a-z0-9-]+)*|\[[0-9a-f:.]+\])$/i;

/** The logo URL, checked: an absolute https URL without credentials, at most 2,048 characters; null clears it. */
export function checkLogoUrl(value: unknown): string | null {
  if (value === null || value === '') return null;
  const refuse = () =>
    errors.validation('logoUrl', `must be an absolute https:// URL of at most ${LOGO_URL_MAX} characters`);
  if (typeof value !== 'string' || value.length > LOGO_URL_MAX || /[\s"'<>\\`]/.test(value)) throw refuse();
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw refuse();
  }
  if (url.protocol !== 'https:' || !HOST.test(url.hostname)) throw refuse();
  if (url.username || url.password) throw errors.validation('logoUrl', 'must not carry a user name or password');
  return url.toString();
}

/** The brand colour, checked: `#rrggbb` (stored lower case); null clears it. */
export function checkBrandColor(value: unknown): string | null {
  if (value === null || value === '') return null;
  if (typeof value !== 'string' || !COLOR.test(value))
    throw errors.validation('brandColor', 'must be a colour written #rrggbb');
  return value.toLowerCase();
}

function checkFlag(field: string, value: unknown, fallback: boolean): boolean {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'boolean') throw errors.validation(field, 'must be true or false');
  return value;
}

type Row = {
  id: string;
  name: string;
  logo_url: string | null;
  brand_color: string | null;
  hosted_sign_up: boolean;
  hosted_password_reset: boolean;
};

const viewOf = (r: Row): ProjectBranding => ({
  projectId: r.id,
  projectName: r.name,
  logoUrl: r.logo_url,
  brandColor: r.brand_color,
  hostedSignUp: r.hosted_sign_up,
  hostedPasswordReset: r.hosted_password_reset,
});

const COLUMNS = 'id, name, logo_url, brand_color, hosted_sign_up, hosted_password_reset';

/** Creates the branding service. */
export function createBrandingService({ db, projects }: Pick<ServiceDeps, 'db'> & { projects: ProjectService }) {
  /** The branding of a project; null for an unknown project. */
  async function get(projectId: string): Promise<ProjectBranding | null> {
    if (!isUuid(projectId)) return null;
    const [row] = await db.em().execute<Row[]>(`select ${COLUMNS} from projects where id = ?`, [projectId]);
    return row ? viewOf(row) : null;
  }
  return {
    get,
    /** Changes the fields given (omitted ones stay; null or '' clears the logo or colour). The owner only. */
    async set(tenantId: string, projectId: string, input: BrandingInput): Promise<ProjectBranding> {
      const project = await projects.getOwned(tenantId, projectId);
      const current = (await get(project.id))!;
      const logoUrl = input.logoUrl === undefined ? current.logoUrl : checkLogoUrl(input.logoUrl);
      const brandColor = input.brandColor === undefined ? current.brandColor : checkBrandColor(input.brandColor);
      const hostedSignUp = checkFlag('hostedSignUp', input.hostedSignUp, current.hostedSignUp);
      const hostedPasswordReset = checkFlag(
        'hostedPasswordReset',
        input.hostedPasswordReset,
        current.hostedPasswordReset,
      );
      const [row] = await db.em().execute<Row[]>(
        `update projects set logo_url = ?, brand_color = ?, hosted_sign_up = ?, hosted_password_reset = ?, updated_at = now()
           where id = ? returning ${COLUMNS}`,
        [logoUrl, brandColor, hostedSignUp, hostedPasswordReset, project.id],
      );
      if (!row) throw errors.notFound('project', projectId);
      return viewOf(row);
    },
  };
}
