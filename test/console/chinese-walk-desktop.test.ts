import { walkInChinese } from './chinese-walk.js';

walkInChinese({ name: 'zh', width: 1280, colorScheme: 'light' });
