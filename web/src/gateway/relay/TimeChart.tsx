// A uPlot line chart over time, sized to its container (and resized with it, down to a phone's width); its
// lines, axes and grid take the colours of the theme in effect (drawn again when the theme changes).
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { themeColor, useTheme } from '../../shared/theme';
import { lang } from '../../shared/i18n';
import { t } from '../texts';

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
}

/** Times in the console's language, 24-hour (uPlot's own formats are English, with am/pm). */
function timeFormats(times: number[]) {
  const locale = lang.value === 'zh' ? 'zh-CN' : 'en-GB';
  const long = times.length > 1 && times[times.length - 1]! - times[0]! > 36 * 3600;
  const axis = new Intl.DateTimeFormat(locale, long ? { month: 'numeric', day: 'numeric', hour: '2-digit', hourCycle: 'h23' } : { hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
  const legend = new Intl.DateTimeFormat(locale, { month: 'numeric', day: 'numeric', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
  return { axis: (v: number) => axis.format(v * 1000), legend: (v: number) => legend.format(v * 1000), space: long ? 90 : 60 };
}

function optionsOf(props: Props, width: number): uPlot.Options {
  const time = timeFormats(props.times);
  const axis = themeColor('--chart-axis');
  const grid = { stroke: themeColor('--chart-grid'), width: 1 };
  return {
    width,
    height: HEIGHT,
    scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] } },
    series: [
      { label: t('rl_time'), value: (_u: uPlot, v: number | null) => (v === null ? '—' : time.legend(v)) },
      ...props.lines.map((line, i) => ({
        label: line.label,
        stroke: themeColor(PALETTE[i % PALETTE.length]),
        width: 2,
        points: { show: true, size: 5 },
        value: (_u: uPlot, v: number | null) => (v === null ? '—' : props.legendValue(v)),
      })),
    ],
    axes: [
      { stroke: axis, grid, ticks: grid, space: time.space, values: (_u, splits) => splits.map(time.axis) },
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
  }, [props.times, props.lines, props.label, theme]);
  return <figure ref={box} class="chart" aria-label={props.label} />;
}
