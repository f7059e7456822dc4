// A uPlot line chart over time, sized to its container (and resized with it, down to a phone's width).
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

const HEIGHT = 240;
const PALETTE = ['#2f5bd3', '#d9480f', '#067647', '#9c36b5', '#b42318', '#0b7285', '#5b6475'];

export interface TimeChartLine {
  label: string;
  values: number[];
}

interface Props {
  /** x values, seconds since the epoch. */
  times: number[];
  lines: TimeChartLine[];
  /** Writes a y value for the axis. */
  axisValue: (v: number) => string;
  /** Writes a y value for the legend. */
  legendValue: (v: number) => string;
  label: string;
}

function optionsOf(props: Props, width: number): uPlot.Options {
  return {
    width,
    height: HEIGHT,
    scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] } },
    series: [
      {},
      ...props.lines.map((line, i) => ({
        label: line.label,
        stroke: PALETTE[i % PALETTE.length],
        width: 2,
        points: { show: true, size: 5 },
        value: (_u: uPlot, v: number | null) => (v === null ? '—' : props.legendValue(v)),
      })),
    ],
    axes: [{}, { size: 64, values: (_u, splits) => splits.map((v) => props.axisValue(v)) }],
    legend: { show: true },
  };
}

export function TimeChart(props: Props) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current!;
    const data: uPlot.AlignedData = [props.times, ...props.lines.map((l) => l.values)];
    const plot = new uPlot(optionsOf(props, el.clientWidth), data, el);
    let width = el.clientWidth;
    const resize = new ResizeObserver(() => {
      if (el.clientWidth === width) return;
      width = el.clientWidth;
      plot.setSize({ width, height: HEIGHT });
    });
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [props.times, props.lines, props.label]);
  return <figure ref={box} class="chart" aria-label={props.label} />;
}
