// Charts with the same figures as a table for screen readers and keyboard users: a time series drawn by uPlot
// (loaded only when a chart is shown), and per-category bars (one row of bars per function) drawn as SVG, where every
// category is named once and no bar can be cut by the plot's edges (uPlot's bars on a numeric x axis repeated the
// names at fractional ticks and cut the first and last bars in half).
import { useEffect, useRef } from 'react';
import type uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export type Series = { label: string; values: (number | null)[]; color: string };

export function Chart({
  title,
  x,
  xLabels,
  series,
  bars = false,
}: {
  title: string;
  x: number[];
  xLabels: string[];
  series: Series[];
  bars?: boolean;
}) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    let plot: uPlot | undefined;
    let live = true;
    void import('uplot').then(({ default: UPlot }) => {
      if (!live || !box.current) return;
      const width = Math.max(280, box.current.clientWidth);
      plot = new UPlot(
        {
          width,
          height: 220,
          scales: { x: { time: false } },
          axes: [{ values: (_u, ticks) => ticks.map((t) => xLabels[Math.round(t)] ?? '') }, {}],
          series: [
            {},
            ...series.map((s) => ({
              label: s.label,
              stroke: s.color,
              fill: bars ? `${s.color}55` : undefined,
              width: 2,
              paths: bars ? UPlot.paths.bars?.({ size: [0.6, 40] }) : undefined,
            })),
          ],
        },
        [x, ...series.map((s) => s.values)] as uPlot.AlignedData,
        box.current,
      );
    });
    return () => {
      live = false;
      plot?.destroy();
    };
  }, [x, xLabels, series, bars]);
  return (
    <figure className="chart">
      <figcaption>
        <strong>{title}</strong>
      </figcaption>
      <div ref={box} aria-hidden="true" />
      <Figures first={bars ? 'Function' : 'Hour'} labels={xLabels} series={series} />
    </figure>
  );
}

/** The figures of a chart as a table, folded. */
function Figures({ first, labels, series }: { first: string; labels: string[]; series: Series[] }) {
  return (
    <details>
      <summary>Figures as a table</summary>
      <div className="table-wrap">
        <table>
          <thead>
            <tr>
              <th scope="col">{first}</th>
              {series.map((s) => (
                <th key={s.label} scope="col">
                  {s.label}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {labels.map((label, i) => (
              <tr key={i}>
                <td>{label}</td>
                {series.map((s) => (
                  <td key={s.label} className="num">
                    {s.values[i] ?? '—'}
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </details>
  );
}

const BAR_W = 420;
const BAR_H = 16;
const ROW_GAP = 12;
const LABEL_CHARS = 24;

/**
 * Horizontal grouped bars: one row per category (its name once, on the left), one bar per series, the value at the
 * bar's end. The drawing grows with the number of categories instead of squeezing them onto an axis.
 */
export function BarChart({
  title,
  categories,
  series,
  unit = '',
}: {
  title: string;
  categories: string[];
  series: Series[];
  unit?: string;
}) {
  const short = (c: string) => (c.length > LABEL_CHARS ? `${c.slice(0, LABEL_CHARS - 1)}…` : c);
  const labelW = Math.min(200, 16 + 7 * Math.max(4, ...categories.map((c) => short(c).length)));
  const valueW = 64;
  const plotW = BAR_W - labelW - valueW;
  const max = Math.max(1, ...series.flatMap((s) => s.values.map((v) => v ?? 0)));
  const rowH = series.length * BAR_H + ROW_GAP;
  const legendH = 22;
  const height = legendH + categories.length * rowH;
  return (
    <figure className="chart bar-chart">
      <figcaption>
        <strong>{title}</strong>
      </figcaption>
      <svg viewBox={`0 0 ${BAR_W} ${height}`} width="100%" aria-hidden="true" focusable="false">
        {series.map((s, j) => (
          <g key={s.label} transform={`translate(${labelW + j * 110}, 4)`}>
            <rect width="12" height="12" fill={s.color} />
            <text x="18" y="11" className="legend">
              {s.label}
            </text>
          </g>
        ))}
        {categories.map((c, i) => {
          const y = legendH + i * rowH;
          return (
            <g key={c} transform={`translate(0, ${y})`}>
              <text x={labelW - 8} y={(series.length * BAR_H) / 2 + 4} textAnchor="end" className="category">
                {short(c)}
              </text>
              {series.map((s, j) => {
                const v = s.values[i];
                const w = v === null || v === undefined ? 0 : Math.max(v > 0 ? 1 : 0, (v / max) * plotW);
                return (
                  <g key={s.label}>
                    <rect className="bar" x={labelW} y={j * BAR_H} width={w} height={BAR_H - 2} fill={s.color} />
                    <text x={labelW + w + 4} y={j * BAR_H + BAR_H - 4} className="value">
                      {v === null || v === undefined ? '—' : `${v}${unit}`}
                    </text>
                  </g>
                );
              })}
            </g>
          );
        })}
      </svg>
      <Figures first="Function" labels={categories} series={series} />
    </figure>
  );
}
