// The relay page's chart: the shared uPlot time chart with the gateway console's name for the time column.
import { TimeChart as Chart, type TimeChartLine } from '../../shared/TimeChart';
import { t } from '../texts';

export type { TimeChartLine };

export function TimeChart(props: { times: number[]; lines: TimeChartLine[]; axisValue: (v: number) => string; legendValue: (v: number) => string; label: string }) {
  return <Chart {...props} timeLabel={t('rl_time')} />;
}
