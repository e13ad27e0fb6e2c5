// A chart drawn by uPlot (loaded only when a chart is shown), with the same figures as a table for screen readers
// and keyboard users.
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
      <details>
        <summary>Figures as a table</summary>
        <div className="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">{bars ? 'Function' : 'Hour'}</th>
                {series.map((s) => (
                  <th key={s.label} scope="col">
                    {s.label}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {x.map((_, i) => (
                <tr key={i}>
                  <td>{xLabels[i]}</td>
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
    </figure>
  );
}
