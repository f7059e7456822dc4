// A uPlot chart over time, sized to its container (and resized with it, down to a phone's width); its lines
// (or bars), axes and grid take the colours of the theme in effect (drawn again when the theme changes). Both
// consoles use it: the gateway's relay page and the account console's usage pages.
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { themeColor, useTheme } from './theme';
import { lang } from './i18n';

const HEIGHT = 240;
/** The line colours: CSS variables --chart-1 … --chart-7 of style.css, per theme. */
const PALETTE = [1, 2, 3, 4, 5, 6, 7].map((i) => `--chart-${i}`);

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
  /** The legend's name of the time column, in the console's language. */
  timeLabel: string;
  /** Whole days: dates on the axis and in the legend, bars instead of lines. */
  daily?: boolean;
}

/** Times in the console's language, 24-hour (uPlot's own formats are English, with am/pm). */
function timeFormats(times: number[], daily: boolean) {
  const locale = lang.value === 'zh' ? 'zh-CN' : 'en-GB';
  if (daily) {
    const day = new Intl.DateTimeFormat(locale, { month: 'numeric', day: 'numeric' });
    return { axis: (v: number) => day.format(v * 1000), legend: (v: number) => day.format(v * 1000), space: 50 };
  }
  const long = times.length > 1 && times[times.length - 1]! - times[0]! > 36 * 3600;
  const axis = new Intl.DateTimeFormat(locale, long ? { month: 'numeric', day: 'numeric', hour: '2-digit', hourCycle: 'h23' } : { hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
  const legend = new Intl.DateTimeFormat(locale, { month: 'numeric', day: 'numeric', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
  return { axis: (v: number) => axis.format(v * 1000), legend: (v: number) => legend.format(v * 1000), space: long ? 90 : 60 };
}

/** One tick per day, thinned so that labels keep about 50 px apart. */
function daySplits(times: number[], width: number): number[] {
  const step = Math.max(1, Math.ceil(times.length / Math.max(1, Math.floor(width / 50))));
  return times.filter((_, i) => i % step === 0);
}

function optionsOf(props: Props, width: number): uPlot.Options {
  const time = timeFormats(props.times, props.daily ?? false);
  const bars = props.daily ? uPlot.paths.bars!({ size: [0.8 / Math.max(1, props.lines.length), 40] }) : undefined;
  const axis = themeColor('--chart-axis');
  const grid = { stroke: themeColor('--chart-grid'), width: 1 };
  return {
    width,
    height: HEIGHT,
    scales: { x: { time: true, ...(props.daily ? { range: (_u: uPlot, min: number, max: number): uPlot.Range.MinMax => [min - 43200, max + 43200] } : {}) }, y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] } },
    series: [
      { label: props.timeLabel, value: (_u: uPlot, v: number | null) => (v === null ? '—' : time.legend(v)) },
      ...props.lines.map((line, i) => ({
        label: line.label,
        stroke: themeColor(PALETTE[i % PALETTE.length]!),
        width: 2,
        ...(bars ? { paths: bars, fill: themeColor(PALETTE[i % PALETTE.length]!), points: { show: false } } : { points: { show: true, size: 5 } }),
        value: (_u: uPlot, v: number | null) => (v === null ? '—' : props.legendValue(v)),
      })),
    ],
    axes: [
      { stroke: axis, grid, ticks: grid, space: time.space, values: (_u, splits) => splits.map(time.axis), ...(props.daily ? { splits: (u: uPlot) => daySplits(props.times, u.bbox.width / devicePixelRatio) } : {}) },
      { stroke: axis, grid, ticks: grid, size: 64, values: (_u, splits) => splits.map((v) => props.axisValue(v)) },
    ],
    legend: { show: true },
  };
}

export function TimeChart(props: Props) {
  const box = useRef<HTMLDivElement>(null);
  const theme = useTheme();
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
  }, [props.times, props.lines, props.label, props.daily, theme]);
  return <figure ref={box} class="chart" aria-label={props.label} />;
}
