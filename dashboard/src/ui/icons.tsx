// The dashboard's few icons, as inline SVG (no icon font, no emoji: an emoji depends on the reader's fonts and shows as
// a box where none has it, as on many Linux desktops). Decorative: hidden from screen readers, sized to the text and
// drawn in its colour. Paths are 24x24, stroked.
import type { SVGProps } from 'react';

type IconProps = Omit<SVGProps<SVGSVGElement>, 'children'>;

function Icon({ d, className, ...rest }: IconProps & { d: string }) {
  return (
    <svg
      viewBox="0 0 24 24"
      width="1em"
      height="1em"
      fill="none"
      stroke="currentColor"
      strokeWidth={2}
      strokeLinecap="round"
      strokeLinejoin="round"
      aria-hidden="true"
      focusable="false"
      className={`icon${className ? ` ${className}` : ''}`}
      {...rest}
    >
      <path d={d} />
    </svg>
  );
}

/** A closed folder. */
export const FolderIcon = (props: IconProps) => (
  <Icon
    d="M3 6.5A1.5 1.5 0 0 1 4.5 5h4.4l2 2.5h8.6A1.5 1.5 0 0 1 21 9v9.5a1.5 1.5 0 0 1-1.5 1.5h-15A1.5 1.5 0 0 1 3 18.5z"
    {...props}
  />
);

/** An open folder (the one selected). */
export const FolderOpenIcon = (props: IconProps) => (
  <Icon
    d="M3 18.5V6.5A1.5 1.5 0 0 1 4.5 5h4.4l2 2.5h7.6A1.5 1.5 0 0 1 20 9v1.5M3 18.5l2.6-7A1.5 1.5 0 0 1 7 10.5h13.2a1 1 0 0 1 .95 1.3l-2.2 7.2a1.5 1.5 0 0 1-1.45 1H4.5A1.5 1.5 0 0 1 3 18.5z"
    {...props}
  />
);
